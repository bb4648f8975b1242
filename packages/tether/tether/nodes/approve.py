"""approve: pause before a call that needs approval, then run, edit or reject it.

The pause is LangChain v1's human-in-the-loop request (tether.control.approval), so clients
that answer create_agent's approvals answer tether's too.
"""

from __future__ import annotations

from typing import Any

from langgraph.config import get_config
from langgraph.constants import CONFIG_KEY_CHECKPOINTER
from langgraph.types import interrupt
from tether.control.approval import ApprovalError, Decision, approval_request, usable_decision
from tether.llm.parsing import call_fingerprint
from tether.nodes.base import Node, emit
from tether.nodes.step import close_step
from tether.settings import AgentSettings
from tether.state import AgentState, Proposal
from tether.tools.arguments import effective_arguments
from tether.tools.envelope import LOOP_ORIGIN, error_envelope


class Approve(Node):
    def run(self, state: AgentState, settings: AgentSettings) -> dict[str, Any]:
        proposal = state.get("proposal")
        if not proposal or proposal["kind"] != "action":
            raise RuntimeError("approve reached without a proposed call")
        tool = proposal.get("tool", "")
        # LangGraph has no public way to ask whether a run can pause (tests/test_packaging.py
        # says why); without a checkpointer an interrupt would return, not fail.
        if not get_config().get("configurable", {}).get(CONFIG_KEY_CHECKPOINTER):
            raise ApprovalError(
                f"{tool} needs approval, but this graph has no checkpointer to pause on: pass "
                "checkpointer=... to build_graph (or use tether.Agent), or set "
                "approval_tools=[] to run side-effecting tools without approval"
            )
        decision = self._ask(proposal)
        emit(state["steps"], "approval", _detail(decision))
        if decision["type"] == "reject":
            message = f"The operator rejected this call: {decision.get('message', '')}"
            result = error_envelope(message, error_type="rejected", origin=LOOP_ORIGIN)
            counter = self.deps.counter_for(settings)
            closed = close_step(state, settings, counter, proposal=proposal, result=result)
            return {"result": result} | closed
        if decision["type"] == "edit":
            arguments = decision["edited_action"]["args"]
            fp = call_fingerprint(self.deps.registry.get(tool), tool, arguments)
            edited: Proposal = {**proposal, "arguments": arguments, "fingerprint": fp}
            return {"proposal": edited, "next": "act"}
        return {"next": "act"}

    def _ask(self, proposal: Proposal) -> Decision:
        """Interrupt until a usable decision arrives; an unusable one asks again, with the
        problem in the description, so the paused run stays intact."""
        tool = proposal.get("tool", "")
        args = proposal.get("arguments", {})
        reason = f"{tool} {proposal.get('gate_reason', 'needs approval')}"
        will_run = effective_arguments(self.deps.registry.get(tool), args)
        problem: str | None = None
        while True:
            request = approval_request(tool, args, reason=reason, will_run=will_run, error=problem)
            try:
                return usable_decision(interrupt(request), tool, self.deps.registry)
            except ApprovalError as exc:
                problem = str(exc)


def _detail(decision: Decision) -> dict[str, Any]:
    """The trace's view of a decision (``action`` is what run summaries read)."""
    if decision["type"] == "edit":
        return {"action": "edit", "arguments": decision["edited_action"]["args"]}
    if decision["type"] == "reject":
        return {"action": "reject", "message": decision.get("message", "")}
    return {"action": "approve"}
