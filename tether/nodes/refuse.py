"""refuse: answer a call that just failed twice with an observation instead of running it."""

from __future__ import annotations

from typing import Any

from tether.graph.state import AgentState
from tether.tools.envelope import LOOP_ORIGIN, error


def refuse(state: AgentState) -> dict[str, Any]:
    proposal = state["proposal"]
    assert proposal and proposal["kind"] == "action"  # routed here only for actions
    message = (
        f"Refused: {proposal['tool']} with these exact arguments failed on its last two runs "
        "and was not run again. Use another tool, or change the arguments."
    )
    return {
        "result": error(message, error_type="refused", origin=LOOP_ORIGIN),
        "trace": [
            {
                "step": state["steps"],
                "event": "refused",
                "detail": {"tool": proposal["tool"], "arguments": proposal["arguments"]},
            }
        ],
    }
