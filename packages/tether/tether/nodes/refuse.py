"""refuse: answer a call that just failed twice, or that the operator just rejected, with an
observation instead of running it."""

from __future__ import annotations

from typing import Any

from tether.decisions.policy import rejected_last
from tether.nodes.base import Node, emit
from tether.nodes.step import close_step
from tether.settings import AgentSettings
from tether.state import AgentState, call_key
from tether.tools.envelope import LOOP_ORIGIN, error_envelope


class Refuse(Node):
    def run(self, state: AgentState, settings: AgentSettings) -> dict[str, Any]:
        proposal = state.get("proposal")
        if not proposal or proposal["kind"] != "action":
            raise RuntimeError("refuse reached without a proposed call")
        record = state.get("calls", {}).get(call_key(proposal.get("fingerprint", "")))
        why = (
            "was rejected by the operator last time"
            if record is not None and rejected_last(record)
            else "failed on its last two runs"
        )
        message = (
            f"Refused: {proposal.get('tool')} with these exact arguments {why} and was not run "
            "again. Use another tool, or change the arguments."
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
