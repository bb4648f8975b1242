"""``create_agent`` with tether's controls added as middleware, as docs/middleware.md says.

The agent is :mod:`tether_bench.agents.create_agent`'s (system prompt, tools, approval gate,
tool-call limit and retry middleware), built through :func:`langchain_tether.create_agent`,
which refuses a middleware order tether cannot hold when the agent is built
(:func:`langchain_tether.check_order`). The order is the one docs/middleware.md gives:
ToolCallLimitMiddleware (which composes as it is; kept outside the gate, where create_agent
has it, so both count the same calls), then LangChain's HumanInTheLoopMiddleware (so tether
sees the calls the operator approved or edited), then tether's controls, with the
recommended ToolRetryMiddleware and ModelRetryMiddleware as their ``retries`` (a write's
failure comes back as a result before the retry sees it: writes are never retried blind;
tether replays a write's transient failure in place, with the same arguments; a model
failure at a cap keeps the run's status). ModelCallLimitMiddleware is left out, as the docs
say: it ends a run tether cannot close; the step cap is tether's ``max_steps``, the harness's
cap.

tether's settings are built as the tether agent's are, from the harness (step cap, token
budget, transient-retry policy) and the run's chat parameters (:func:`tether_settings`). The
token budget is tether's own, checked before each call, so the harness's guard is off. The
run's ids are create_agent's (``run_name``), so both meet the same payment ids.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from langchain.agents.middleware import (
    AgentMiddleware,
    ModelCallLimitMiddleware,
    ModelRetryMiddleware,
    ToolRetryMiddleware,
)
from langchain_core.tools import BaseTool
from langchain_openai import ChatOpenAI
from langchain_tether import answer_of, create_agent, tether_middleware
from tether import AgentSettings

from tether_bench.agents.base import ChatSettings, Sleep
from tether_bench.agents.create_agent import CreateAgentAgent, approval_gate
from tether_bench.agents.tether_agent import outcome_of as tether_outcome
from tether_bench.agents.tether_agent import tether_settings
from tether_bench.gates import ApprovalDesk
from tether_bench.harness import Harness, VariantSettings
from tether_bench.records import Outcome

RETRIES = (ToolRetryMiddleware, ModelRetryMiddleware)
"""The recommended middleware that go in ``tether_middleware(retries=...)``."""


class CreateAgentTetherAgent(CreateAgentAgent):
    """create_agent with its recommended middleware and tether's, in the order tether's docs
    give (ModelCallLimitMiddleware left out: tether's ``max_steps`` is the step cap)."""

    name = "create_agent_tether"
    guards_budget = False
    run_name = "create_agent"

    def __init__(self, *, harness: Harness | None = None, sleep: Sleep | None = None) -> None:
        super().__init__(harness=harness, middleware=True, sleep=sleep)

    def tether_settings(
        self, chat: ChatSettings | None = None, instructions: str | None = None
    ) -> AgentSettings:
        """tether's settings for a run with ``chat`` (placeholders for the table) and the
        scenario's policy (in the system prompt too, as for create_agent)."""
        chat = chat or ChatSettings(base_url="http://127.0.0.1:1/v1", model="m")
        return tether_settings(
            base_url=chat.base_url,
            model=chat.model,
            temperature=chat.temperature,
            max_tokens=chat.max_tokens,
            timeout=chat.timeout,
            harness=self.harness,
            instructions=instructions,
        )

    def build_middleware(self) -> list[AgentMiddleware[Any, Any, Any]]:
        """create_agent's recommended middleware but ModelCallLimitMiddleware, which tether's
        middleware refuses (tether's ``max_steps`` caps the steps)."""
        recommended = super().build_middleware()
        return [m for m in recommended if not isinstance(m, ModelCallLimitMiddleware)]

    def build_agent(self, model: ChatOpenAI, tools: list[BaseTool], **options: Any) -> Any:
        """:func:`langchain_tether.create_agent`: the middleware's order is checked."""
        return create_agent(model, tools, **options)

    def agent_middleware(
        self,
        desk: ApprovalDesk,
        tools: list[BaseTool],
        chat: ChatSettings,
        instructions: str | None = None,
    ) -> list[AgentMiddleware[Any, Any, Any]]:
        """The tool-call limit, the approval gate, then tether's controls with the retries
        inside them (the order docs/middleware.md gives)."""
        recommended = self.build_middleware()
        retries = [m for m in recommended if isinstance(m, RETRIES)]
        outer = [m for m in recommended if not isinstance(m, RETRIES)]
        controls = tether_middleware(
            self.tether_settings(chat, instructions), tools=tools, retries=retries
        )
        return [*outer, approval_gate(desk), *controls]

    def outcome_of(self, state: dict[str, Any]) -> Outcome:
        """tether's ending when it stopped the run (with the answer it asked for at a cap, if
        any), by its stop cause; else (an answer, which tether marks ``completed``)
        create_agent's."""
        if state.get("tether_cause") in (None, "answer"):
            return super().outcome_of(state)
        ended = {
            "cause": state.get("tether_cause"),
            "status": state.get("tether_status"),
            "reason": str(state.get("tether_reason") or "")[:500],
            "answer": answer_of(state),
        }
        return tether_outcome(ended)

    def settings(self) -> VariantSettings:
        settings = self.tether_settings()
        return dataclasses.replace(
            super().settings(),
            agent=self.name,
            step_cap=settings.max_steps,
            step_cap_by="tether's max_steps",
            token_budget=settings.token_budget,
            token_budget_by="tether's TokenBudgetMiddleware",
            retry_by="ToolRetryMiddleware on reads; tether replays a write in place",
        )
