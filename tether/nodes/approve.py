"""approve: pause before a call that needs approval, then run, edit or reject it."""

from __future__ import annotations

from typing import Any

from langgraph.config import get_config
from langgraph.constants import CONFIG_KEY_CHECKPOINTER
from langgraph.types import interrupt

from tether.control.approval import ApprovalError, ApprovalRequest, parse_decision
from tether.graph.decisions import LOOP_ORIGIN
from tether.llm.parsing import fingerprint
from tether.nodes.base import Node, emit
from tether.nodes.step import close_step
from tether.settings import AgentSettings
from tether.state import AgentState, ToolResult


class Approve(Node):
    def run(self, state: AgentState, settings: AgentSettings) -> dict[str, Any]:
        proposal = state.get("proposal")
        if not proposal or proposal["kind"] != "action":
            raise RuntimeError("approve reached without a proposed call")
        tool = proposal.get("tool", "")
        if not get_config().get("configurable", {}).get(CONFIG_KEY_CHECKPOINTER):
            raise ApprovalError(
                f"{tool} needs approval, but this graph has no checkpointer to pause on: pass "
                "checkpointer=... to build_graph (or use tether.Agent), or set "
                "approval_tools=[] to run side-effecting tools without approval"
            )
        request: ApprovalRequest = {
            "kind": "approval",
            "tool": tool,
            "arguments": proposal.get("arguments", {}),
            "step": state["steps"],
            "run_id": state["run_id"],
            "reason": f"{tool} needs approval ({proposal.get('rule', 'approval gate')})",
        }
        while True:  # an unusable answer asks again, so the paused run stays intact
            try:
                decision = parse_decision(interrupt(request))
            except ApprovalError as exc:
                request = {**request, "error": str(exc)}
                continue
            if decision["action"] != "edit":
                break
            problem = self.deps.registry.check_arguments(tool, decision["arguments"])
            if problem is None:
                break
            request = {**request, "error": f"edited arguments rejected: {problem}"}

        emit(state["steps"], "approval", dict(decision))
        if decision["action"] == "reject":
            message = f"The operator rejected this call: {decision.get('message', '')}"
            result: ToolResult = {
                "status": "error",
                "message": message,
                "meta": {"error_type": "rejected", "transient": False, "origin": LOOP_ORIGIN},
            }
            counter = self.deps.counter_for(settings)
            closed = close_step(state, settings, counter, proposal=proposal, result=result)
            return {"result": result} | closed
        if decision["action"] == "edit":
            arguments = decision["arguments"]
            edited = {
                **proposal,
                "arguments": arguments,
                "fingerprint": fingerprint(tool, arguments),
            }
            return {"proposal": edited}
        return {}
