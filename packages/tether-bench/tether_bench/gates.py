"""Approval gates in a benchmark run: one desk per run, and the loop that answers interrupts.

:class:`ApprovalDesk` puts the scenario in front of the one operator and logs every answer in
the run's recorder (so each agent's writes are counted by the same instrument). tether and
create_agent pause with a LangGraph interrupt carrying LangChain's human-in-the-loop request;
:func:`run_gated` resumes them with ``Command(resume=...)``, the API a user resumes with.
AgentExecutor has no gate, so its write tools ask the desk before they run (see lc_tools).
"""

from __future__ import annotations

import uuid
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphRecursionError
from langgraph.types import Command
from tether.control import Decision, HITLRequest, HITLResponse, is_approval_request

from tether_bench.instrument import RecordingRegistry
from tether_bench.operator import OPERATOR, Operator, write_tools
from tether_bench.scenarios import Scenario

MAX_RESUMES = 1000
"""A run that keeps pausing past this is broken, not slow: every pause follows a model call."""


class ApprovalDesk:
    """One run's approvals: which tools are gated, and the operator's logged answers."""

    def __init__(
        self, scenario: Scenario, registry: RecordingRegistry, operator: Operator = OPERATOR
    ) -> None:
        self.scenario = scenario
        self.registry = registry
        self.recorder = registry.recorder
        self.operator = operator
        self.tools = write_tools(registry)

    def gated(self, tool: str) -> bool:
        return tool in self.tools

    def decide(self, tool: str, arguments: Any) -> Decision:
        """The operator's decision on one proposed write, logged against the latest turn."""
        problem = self.registry.check_arguments(tool, arguments)
        decision = self.operator.decide(self.scenario, tool, arguments, problem=problem)
        approved = decision["type"] == "approve"
        self.recorder.add_approval(tool, arguments, approved=approved, valid=problem is None)
        return decision

    def answer(self, request: HITLRequest) -> HITLResponse:
        """One decision per gated call in the request, in order (create_agent batches them)."""
        return {
            "decisions": [self.decide(a["name"], a["args"]) for a in request["action_requests"]]
        }


def new_thread() -> tuple[InMemorySaver, RunnableConfig]:
    """A checkpointer to pause on, and a fresh thread in it, for one run."""
    return InMemorySaver(), {"configurable": {"thread_id": uuid.uuid4().hex}}


def pending_request(graph: Any, config: RunnableConfig) -> HITLRequest | None:
    """The approval request the run is paused on, if any."""
    for item in graph.get_state(config).interrupts:
        if is_approval_request(item.value):
            return item.value  # type: ignore[no-any-return]
    return None


def run_gated(
    graph: Any,
    payload: Any,
    config: RunnableConfig,
    desk: ApprovalDesk,
    *,
    recursion_limit: int | None = None,
    call_cap: int | None = None,
) -> dict[str, Any]:
    """Run ``graph`` to its end, answering each approval request with the desk's decisions.

    ``recursion_limit`` is the whole run's, not each resume's: LangGraph counts super-steps
    per invocation, so a resume gets what earlier invocations left. A rejected call skips the
    tools node, so a cap made of super-steps stretches under rejections: ``call_cap`` (model
    calls) keeps it at the harness's step cap.
    """
    state: dict[str, Any] = graph.invoke(payload, _limited(graph, config, recursion_limit))
    for _ in range(MAX_RESUMES):
        request = pending_request(graph, config)
        if request is None:
            return state
        calls = len(desk.recorder.model_calls)
        if call_cap is not None and calls >= call_cap:
            raise GraphRecursionError(f"step cap of {call_cap} model calls reached")
        resume: Command[Any] = Command(resume=desk.answer(request))
        state = graph.invoke(resume, _limited(graph, config, recursion_limit))
    raise RuntimeError(f"the run paused for approval more than {MAX_RESUMES} times")


def _limited(graph: Any, config: RunnableConfig, limit: int | None) -> RunnableConfig:
    """``config`` with what is left of the run's recursion limit (GraphRecursionError, as
    LangGraph raises it, when nothing is left)."""
    if limit is None:
        return config
    done = graph.get_state(config).metadata or {}
    left = limit - (int(done.get("step", -1)) + 1)
    if left <= 0:
        raise GraphRecursionError(f"Recursion limit of {limit} reached over the resumed run")
    return {**config, "recursion_limit": left}
