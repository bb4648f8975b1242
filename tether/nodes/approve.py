"""approve: pause before a call that needs approval, then run, edit or reject it."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import interrupt

from tether.control.approval import ApprovalError, ApprovalRequest, parse_decision
from tether.graph.state import AgentState
from tether.llm.parsing import fingerprint
from tether.nodes.deps import Deps
from tether.tools.envelope import LOOP_ORIGIN, error

try:  # where LangGraph keeps the run's checkpointer; absent means interrupts cannot pause
    from langgraph._internal._constants import CONFIG_KEY_CHECKPOINTER
except ImportError:  # pragma: no cover - older layouts
    CONFIG_KEY_CHECKPOINTER = "__pregel_checkpointer"


def make_approve(deps: Deps) -> Any:
    def approve(state: AgentState, config: RunnableConfig) -> dict[str, Any]:
        proposal = state["proposal"]
        assert proposal and proposal["kind"] == "action"  # routed here only for actions
        tool = proposal["tool"]
        if not config.get("configurable", {}).get(CONFIG_KEY_CHECKPOINTER):
            raise ApprovalError(
                f"{tool} needs approval, but this graph has no checkpointer to pause on: pass "
                "checkpointer=... to build_graph (or use tether.Agent), or set "
                "approval_tools=[] to run side-effecting tools without approval"
            )
        request: ApprovalRequest = {
            "kind": "approval",
            "tool": tool,
            "arguments": proposal["arguments"],
            "step": state["steps"],
            "run_id": state["run_id"],
            "reason": f"{tool} changes the world and needs approval",
        }
        while True:  # an unusable answer asks again, so the paused run stays intact
            try:
                decision = parse_decision(interrupt(request))
            except ApprovalError as exc:
                request = {**request, "error": str(exc)}
                continue
            if decision["action"] != "edit":
                break
            problem = deps.registry.check_arguments(tool, decision["arguments"])
            if problem is None:
                break
            request = {**request, "error": f"edited arguments rejected: {problem}"}

        event = {"step": state["steps"], "event": "approval", "detail": dict(decision)}
        if decision["action"] == "reject":
            message = f"The operator rejected this call: {decision.get('message', '')}"
            result = error(message, error_type="rejected", origin=LOOP_ORIGIN)
            return {"result": result, "trace": [event]}
        if decision["action"] == "edit":
            arguments = decision["arguments"]
            edited = {
                **proposal,
                "arguments": arguments,
                "fingerprint": fingerprint(tool, arguments),
            }
            return {"proposal": edited, "trace": [event]}
        return {"trace": [event]}

    return approve
