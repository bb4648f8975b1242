"""Today's strongest alternative: LangChain v1's ``create_agent`` with its middleware.

Configured the way a careful user would: the same step cap as tether (10 model calls, then
stop with a message), a cap on tool calls, and in-place retries of transient tool failures
with exponential backoff and jitter, like tether's (3 attempts). The tools are the
registry's; a transient error envelope is raised so ToolRetryMiddleware can retry it, and
when retries run out the model is told what failed and may go on.
"""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import (
    AgentMiddleware,
    ModelCallLimitMiddleware,
    ToolCallLimitMiddleware,
    ToolRetryMiddleware,
)
from langchain_core.messages import AIMessage
from langchain_openai import ChatOpenAI
from langgraph.errors import GraphRecursionError

from tether.bench.agents.base import BenchAgent, ChatSettings
from tether.bench.agents.lc_tools import registry_tools
from tether.bench.instrument import RecordingRegistry
from tether.bench.records import Outcome
from tether.bench.scenarios import Scenario
from tether.errors import TransientToolError

MODEL_CALL_LIMIT = 10
TOOL_CALL_LIMIT = 10
RECURSION_LIMIT = 200
LIMIT_PREFIXES = ("Model call limits exceeded", "Tool call limit")

SYSTEM_PROMPT = (
    "You are a careful tool-calling agent. Work on the user's task step by step, calling one "
    "tool at a time. Use only the tools you are given and never invent tool results. When the "
    "task is done, reply with the final answer as plain text. If no tool can do what the task "
    "needs, or information is missing, say so and why instead of guessing."
)


class CreateAgentAgent(BenchAgent):
    """create_agent + ModelCallLimit, ToolCallLimit and ToolRetry middleware."""

    name = "create_agent"

    def __init__(
        self,
        *,
        model_call_limit: int = MODEL_CALL_LIMIT,
        tool_call_limit: int = TOOL_CALL_LIMIT,
        retry_initial_delay: float = 0.5,
    ) -> None:
        self.model_call_limit = model_call_limit
        self.tool_call_limit = tool_call_limit
        self.retry_initial_delay = retry_initial_delay

    def execute(
        self,
        scenario: Scenario,
        registry: RecordingRegistry,
        model: ChatOpenAI,
        chat: ChatSettings,
    ) -> Outcome:
        middleware: list[AgentMiddleware[Any, Any, Any]] = [
            ModelCallLimitMiddleware(run_limit=self.model_call_limit, exit_behavior="end"),
            ToolCallLimitMiddleware(run_limit=self.tool_call_limit, exit_behavior="continue"),
            ToolRetryMiddleware(
                max_retries=2,
                retry_on=(TransientToolError,),
                on_failure="continue",
                initial_delay=self.retry_initial_delay,
                backoff_factor=2.0,
                max_delay=8.0,
                jitter=True,
            ),
        ]
        agent = create_agent(
            model,
            registry_tools(registry, raise_transient=True),
            system_prompt=SYSTEM_PROMPT,
            middleware=middleware,
        )
        try:
            state = agent.invoke(
                {"messages": [{"role": "user", "content": scenario.task}]},
                config={"recursion_limit": RECURSION_LIMIT},
            )
        except GraphRecursionError as exc:
            return Outcome(termination="max_steps", reason=f"recursion limit: {exc}"[:300])
        messages = state.get("messages", [])
        last = messages[-1] if messages else None
        if not isinstance(last, AIMessage):
            return Outcome(termination="error", reason="the run ended without an AI message")
        text = last.text
        if text.startswith(LIMIT_PREFIXES):
            return Outcome(termination="max_steps", reason=text[:300])
        return Outcome(answer=text, termination="completed", reason="final answer")
