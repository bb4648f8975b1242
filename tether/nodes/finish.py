"""finish: write the outcome: status, reason and (for a completed run) the answer."""

from __future__ import annotations

from typing import Any

from tether.graph.state import AgentState


def finish(state: AgentState) -> dict[str, Any]:
    verdict = state.get("verdict")
    if verdict is None:
        raise RuntimeError("finish reached without a verdict")
    proposal = state.get("proposal")
    answer = proposal.get("answer") if proposal and verdict["status"] == "completed" else None
    return {
        "status": verdict["status"],
        "reason": verdict["reason"],
        "answer": answer,
        "trace": [
            {
                "step": state.get("steps", 0),
                "event": "finish",
                "detail": {
                    "status": verdict["status"],
                    "reason": verdict["reason"],
                    "usage": state.get("usage"),
                },
            }
        ],
    }
