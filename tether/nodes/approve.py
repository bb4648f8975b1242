"""approve: pause before a call that needs approval, then run, edit or reject it.

The pause is LangChain v1's human-in-the-loop request (tether.control.approval), so clients
that answer create_agent's approvals answer tether's too.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from tether.control.approval import (
    ApprovalError,
    Decision,
    approval_request,
    gate_reason,
    normalised_arguments,
    parse_decision,
)
from tether.graph.state import AgentState
from tether.llm.parsing import fingerprint
from tether.nodes.deps import Deps
from tether.tools.envelope import LOOP_ORIGIN, error

try:  # where LangGraph keeps the run's checkpointer; absent means interrupts cannot pause
    from langgraph._internal._constants import CONFIG_KEY_CHECKPOINTER
except ImportError:  # pragma: no cover - older layouts
    CONFIG_KEY_CHECKPOINTER = "__pregel_checkpointer"


def make_approve(deps: Deps) -> Any:
    def approve(state: AgentState, config: RunnableConfig, runtime: Runtime[Any]) -> dict[str, Any]:
        proposal = state["proposal"]
        assert proposal and proposal["kind"] == "action"  # routed here only for actions
        tool = proposal["tool"]
        if not config.get("configurable", {}).get(CONFIG_KEY_CHECKPOINTER):
            raise ApprovalError(
                f"{tool} needs approval, but this graph has no checkpointer to pause on: pass "
                "checkpointer=... to build_graph (or use tether.Agent), or set "
                "approval_tools=[] to run side-effecting tools without approval"
            )
        gated_by = deps.settings_for(runtime).approval_tools
        decision = _ask(deps, tool, proposal["arguments"], gated_by)
        event = {"step": state["steps"], "event": "approval", "detail": _detail(decision)}
        if decision["type"] == "reject":
            message = f"The operator rejected this call: {decision.get('message', '')}"
            result = error(message, error_type="rejected", origin=LOOP_ORIGIN)
            return {"result": result, "trace": [event]}
        if decision["type"] == "edit":
            arguments = decision["edited_action"]["args"]
            edited = {
                **proposal,
                "arguments": arguments,
                "fingerprint": fingerprint(tool, arguments),
            }
            return {"proposal": edited, "trace": [event]}
        return {"trace": [event]}

    return approve


def _ask(deps: Deps, tool: str, args: dict[str, Any], approval_tools: list[str] | None) -> Decision:
    """Interrupt until a usable decision arrives; an unusable one asks again, with the
    problem in the description, so the paused run stays intact."""
    reason = gate_reason(tool, approval_tools)
    will_run = normalised_arguments(deps.registry.get(tool), args)
    problem: str | None = None
    while True:
        request = approval_request(tool, args, reason=reason, will_run=will_run, error=problem)
        try:
            decision = parse_decision(interrupt(request), tool)
        except ApprovalError as exc:
            problem = str(exc)
            continue
        if decision["type"] != "edit":
            return decision
        problem = deps.registry.check_arguments(tool, decision["edited_action"]["args"])
        if problem is None:
            return decision
        problem = f"edited arguments rejected: {problem}"


def _detail(decision: Decision) -> dict[str, Any]:
    """The trace's view of a decision (``action`` is what run summaries read)."""
    if decision["type"] == "edit":
        return {"action": "edit", "arguments": decision["edited_action"]["args"]}
    if decision["type"] == "reject":
        return {"action": "reject", "message": decision.get("message", "")}
    return {"action": "approve"}
