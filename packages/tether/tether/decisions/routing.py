"""Conditional edges: pure functions from the state to the next node's name.

Their ``Literal`` return types are the graph's edges, so the diagram is read off the code.
They read what the nodes recorded (the status, the proposal's gate, a call in flight) and
decide nothing new: the decisions were made in :mod:`tether.decisions.policy`.
"""

from __future__ import annotations

from typing import Literal

from tether.state import RouteView

EDGE_LABELS: dict[tuple[str, str], str] = {
    ("think", "act"): "tool call",
    ("think", "approve"): "needs approval",
    ("think", "refuse"): "failed twice or rejected",
    ("think", "think"): "unusable reply",
    ("think", "__end__"): "stop",
    ("approve", "act"): "approved",
    ("approve", "think"): "rejected",
    ("approve", "__end__"): "stop",
    ("act", "act"): "retry or replay",
    ("act", "think"): "continue",
    ("act", "__end__"): "stop",
    ("refuse", "think"): "continue",
    ("refuse", "act"): "replay unknown outcome",
    ("refuse", "__end__"): "stop",
}
"""How each conditional edge is labelled in diagrams and Studio."""


def _stopped(state: RouteView) -> bool:
    return state.get("status", "running") != "running"


def route_after_think(
    state: RouteView,
) -> Literal["act", "approve", "refuse", "think", "__end__"]:
    """Run the proposed call, ask for approval first, or refuse it; after an answer, an
    unusable reply or a repeat (closed in think), stop or ask the model again."""
    if _stopped(state):
        return "__end__"
    if state.get("resolving"):
        return "act"
    proposal = state.get("proposal")
    gate = proposal.get("gate") if proposal and proposal["kind"] == "action" else None
    if gate == "run":
        return "act"
    if gate == "approve":
        return "approve"
    if gate == "refuse":
        return "refuse"
    return "think"


def route_after_approve(state: RouteView) -> Literal["act", "think", "__end__"]:
    """Run an approved (possibly edited) call; a rejection closed the step as a failure."""
    if _stopped(state):
        return "__end__"
    return "act" if state.get("result") is None or state.get("resolving") else "think"


def route_after_act(state: RouteView) -> Literal["act", "think", "__end__"]:
    """Retry in place while a call is still in flight (its step not closed)."""
    if _stopped(state):
        return "__end__"
    return "act" if state.get("call_attempt", 0) > 0 or state.get("resolving") else "think"


def route_after_refuse(state: RouteView) -> Literal["act", "think", "__end__"]:
    if _stopped(state):
        return "__end__"
    return "act" if state.get("resolving") else "think"
