"""refuse: answer a call that just failed twice, that the operator just rejected or that the
step's offer does not allow, with an observation instead of running it."""

from __future__ import annotations

from typing import Any

from tether.nodes.base import Node, emit
from tether.nodes.step import close_step
from tether.settings import AgentSettings
from tether.state import AgentState
from tether.tools.envelope import LOOP_ORIGIN, error_envelope


class Refuse(Node):
    def run(self, state: AgentState, settings: AgentSettings) -> dict[str, Any]:
        proposal = state.get("proposal")
        if not proposal or proposal["kind"] != "action":
            raise RuntimeError("refuse reached without a proposed call")
        why = proposal.get("gate_reason", "failed on its last two runs")  # the gate's reason
        message = (
            f"Refused: {proposal.get('tool')} with these exact arguments {why}; it was not run "
            "this time. Use another tool, or change the arguments."
        )
        result = error_envelope(message, error_type="refused", origin=LOOP_ORIGIN)
        emit(
            state["steps"],
            "refused",
            {"tool": proposal.get("tool"), "arguments": proposal.get("arguments"), "why": why},
        )
        counter = self.deps.counter_for(settings)
        closed = close_step(state, settings, counter, proposal=proposal, result=result)
        return {"result": result} | closed
