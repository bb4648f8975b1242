"""Today's strongest alternative: LangChain v1's ``create_agent``, recommended and stock.

``create_agent`` is configured as its docs recommend: ModelCallLimitMiddleware (the harness's
step cap, then stop with a message), ToolCallLimitMiddleware (as many tool calls), and
ToolRetryMiddleware / ModelRetryMiddleware for transient failures, the tool retry set from the
harness's policy (a transient error envelope is raised so the middleware can retry it; when
retries run out the model is told what failed and may go on). ModelRetryMiddleware catches
the harness's budget stop too (it retries the call, then returns the failure's text as the
model's reply); the harness still records the run as ``partial`` because the guard says it
fired (:func:`tether_bench.agents.base.budget_stop`). ``create_agent_stock`` has no
middleware: the step cap is the graph's recursion limit (two super-steps per model call), and
transient tool failures get the harness's in-place retry around the tools.

Both variants run with approval gates on the world's write tools, as every agent does:
HumanInTheLoopMiddleware pauses the run and the harness resumes it with the operator's
decision (:mod:`tether_bench.gates`). A resumed run is a new LangGraph invocation, so the
limits are per thread (each run has its own) rather than per invocation.
"""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import (
    AgentMiddleware,
    HumanInTheLoopMiddleware,
    ModelCallLimitMiddleware,
    ModelRetryMiddleware,
    ToolCallLimitMiddleware,
    ToolRetryMiddleware,
)
from langchain_core.messages import AIMessage
from langchain_core.tools import BaseTool
from langchain_openai import ChatOpenAI
from langgraph.errors import GraphRecursionError
from tether import TransientToolError
from tether.control import ALLOWED_DECISIONS

from tether_bench.agents.base import BenchAgent, ChatSettings, Say, Sleep
from tether_bench.agents.lc_tools import registry_tools
from tether_bench.gates import ApprovalDesk, new_thread, run_gated
from tether_bench.harness import Harness, VariantSettings
from tether_bench.instrument import RecordingRegistry
from tether_bench.records import Outcome
from tether_bench.scenarios import Scenario

RECURSION_LIMIT = 200
SUPER_STEPS_PER_CALL = 3  # model, HumanInTheLoopMiddleware.after_model, tools
MODEL_RETRIES = 2  # ModelRetryMiddleware's default
LIMIT_PREFIXES = ("Model call limits exceeded", "Tool call limit")

SYSTEM_PROMPT = (
    "You are a careful tool-calling agent. Work on the user's task step by step, calling one "
    "tool at a time. Use only the tools you are given and never invent tool results. When the "
    "task is done, reply with the final answer as plain text. If no tool can do what the task "
    "needs, or information is missing, say so and why instead of guessing."
)


def system_prompt(instructions: str | None) -> str:
    """The system prompt: the short one above, then the scenario's domain policy, if any."""
    return f"{SYSTEM_PROMPT}\n\n{instructions}" if instructions else SYSTEM_PROMPT


class CreateAgentAgent(BenchAgent):
    """create_agent with (``middleware=True``) or without its recommended middleware."""

    name = "create_agent"
    guards_budget = True

    def __init__(
        self,
        *,
        harness: Harness | None = None,
        middleware: bool = True,
        sleep: Sleep | None = None,
    ) -> None:
        self.harness = harness or Harness()
        self.middleware = middleware
        if sleep is not None:
            self.sleep = sleep
        if not middleware:
            self.name = "create_agent_stock"  # type: ignore[misc]

    def build_middleware(self) -> list[AgentMiddleware[Any, Any, Any]]:
        """The recommended middleware, set from the harness (none for the stock variant)."""
        if not self.middleware:
            return []
        h = self.harness
        delay = h.retry_initial_delay
        return [
            ModelCallLimitMiddleware(thread_limit=h.step_cap, exit_behavior="end"),
            ToolCallLimitMiddleware(thread_limit=h.step_cap, exit_behavior="continue"),
            ToolRetryMiddleware(
                max_retries=h.tool_attempts - 1,
                retry_on=(TransientToolError,),
                on_failure="continue",
                initial_delay=delay,
                backoff_factor=h.retry_backoff,
                max_delay=h.retry_max_delay,
                jitter=True,
            ),
            ModelRetryMiddleware(
                max_retries=MODEL_RETRIES,
                initial_delay=delay,
                backoff_factor=h.retry_backoff,
                max_delay=h.retry_max_delay,
            ),
        ]

    @property
    def recursion_limit(self) -> int:
        """Stock: model, approval and tools node per step, so 3 x cap super-steps allow cap
        model calls (over the whole run: :func:`run_gated` carries it across resumes)."""
        return RECURSION_LIMIT if self.middleware else SUPER_STEPS_PER_CALL * self.harness.step_cap

    def settings(self) -> VariantSettings:
        h, parts = self.harness, {type(m).__name__: m for m in self.build_middleware()}
        limit = parts.get("ModelCallLimitMiddleware")
        tools = parts.get("ToolCallLimitMiddleware")
        retry = parts.get("ToolRetryMiddleware")
        return VariantSettings(
            agent=self.name,
            step_cap=limit.thread_limit if limit else self.recursion_limit // SUPER_STEPS_PER_CALL,  # type: ignore[attr-defined]
            step_cap_by="ModelCallLimitMiddleware" if limit else "recursion_limit",
            token_budget=h.token_budget,
            token_budget_by="harness guard",
            tool_attempts=(retry.max_retries + 1) if retry else h.tool_attempts,  # type: ignore[attr-defined]
            retry_delays_s=_delays(retry)
            if retry
            else tuple(h.delay(a) for a in range(1, h.tool_attempts)),
            retry_by="ToolRetryMiddleware" if retry else "harness, around the tools",
            output_repair="none",
            model_call_retries=(
                f"client {h.model_client_retries} + ModelRetryMiddleware {MODEL_RETRIES}"
                if self.middleware
                else f"client {h.model_client_retries}"
            ),
            tool_call_limit=tools.thread_limit if tools else None,  # type: ignore[attr-defined]
        )

    def open_thread(
        self,
        scenario: Scenario,
        registry: RecordingRegistry,
        model: ChatOpenAI,
        chat: ChatSettings,
    ) -> Say:
        """One agent on one checkpointed thread: each user message is an invocation on it
        (the thread's messages carry the conversation)."""
        tools = registry_tools(
            registry,
            raise_transient=self.middleware,
            harness=self.harness,
            retry=not self.middleware,
            sleep=self.sleep,
        )
        desk = ApprovalDesk(scenario, registry)
        checkpointer, config = new_thread()
        agent = self.build_agent(
            model,
            tools,
            system_prompt=system_prompt(scenario.instructions),
            middleware=self.agent_middleware(desk, tools, chat, scenario.instructions),
            checkpointer=checkpointer,
        )

        def say(message: str) -> Outcome:
            task = {"messages": [{"role": "user", "content": message}]}
            try:
                state = run_gated(
                    agent,
                    task,
                    config,
                    desk,
                    recursion_limit=self.recursion_limit,
                    call_cap=None if self.middleware else self.harness.step_cap,
                )
            except GraphRecursionError as exc:
                return Outcome(termination="max_steps", reason=f"recursion limit: {exc}"[:300])
            return self.outcome_of(state)

        return say

    def build_agent(self, model: ChatOpenAI, tools: list[BaseTool], **options: Any) -> Any:
        """LangChain's ``create_agent`` on ``model`` and ``tools`` with ``options``."""
        return create_agent(model, tools, **options)

    def agent_middleware(
        self,
        desk: ApprovalDesk,
        tools: list[BaseTool],
        chat: ChatSettings,
        instructions: str | None = None,
    ) -> list[AgentMiddleware[Any, Any, Any]]:
        """The run's middleware: the recommended ones, then the approval gate (the policy,
        ``instructions``, is in the system prompt; no middleware here reads it)."""
        return [*self.build_middleware(), approval_gate(desk)]

    def outcome_of(self, state: dict[str, Any]) -> Outcome:
        """The final state's outcome: the last message's answer, or the limit that ended it."""
        messages = state.get("messages", [])
        last = messages[-1] if messages else None
        if not isinstance(last, AIMessage):
            return Outcome(termination="error", reason="the run ended without an AI message")
        text = last.text
        if text.startswith(LIMIT_PREFIXES):
            return Outcome(termination="max_steps", reason=text[:300])
        return Outcome(answer=text, termination="completed", reason="final answer")


def approval_gate(desk: ApprovalDesk) -> HumanInTheLoopMiddleware:
    """LangChain's human-in-the-loop middleware on the desk's gated tools, every decision
    allowed (as tether's gate allows them)."""
    return HumanInTheLoopMiddleware(
        interrupt_on={tool: {"allowed_decisions": list(ALLOWED_DECISIONS)} for tool in desk.tools}
    )


def _delays(retry: Any) -> tuple[float, ...]:
    """ToolRetryMiddleware's waits before each retry, without jitter, as it computes them."""
    return tuple(
        min(retry.max_delay, retry.initial_delay * retry.backoff_factor ** (a - 1))
        for a in range(1, retry.max_retries + 1)
    )
