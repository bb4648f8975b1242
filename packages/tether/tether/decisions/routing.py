"""Conditional edges: pure functions from the state to the next node's name.

Their ``Literal`` return types are the graph's edges, so the diagram is read off the code.
They read the one move the last node recorded (``next``) and decide nothing new: the
decisions were made in :mod:`tether.decisions.policy`, and the nodes wrote them down.
"""

from __future__ import annotations

from typing import Any, Literal

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


def _move(state: RouteView, allowed: tuple[str, ...], after: str) -> Any:
    """The recorded move as the edge's target; a move the node may not make is a bug."""
    move = state.get("next", "think")
    target = "__end__" if move == "end" else move
    if target not in allowed:
        raise RuntimeError(f"{after} recorded the move {move!r}, which cannot follow it")
    return target


def route_after_think(
    state: RouteView,
) -> Literal["act", "approve", "refuse", "think", "__end__"]:
    """Run the proposed call, ask for approval first, or refuse it; after an answer, an
    unusable reply or a repeat (closed in think), stop or ask the model again."""
    return _move(state, ("act", "approve", "refuse", "think", "__end__"), "think")


def route_after_approve(state: RouteView) -> Literal["act", "think", "__end__"]:
    """Run an approved (possibly edited) call; a rejection closed the step as a failure."""
    return _move(state, ("act", "think", "__end__"), "approve")


def route_after_act(state: RouteView) -> Literal["act", "think", "__end__"]:
    """Retry in place while a call is still in flight (its step not closed)."""
    return _move(state, ("act", "think", "__end__"), "act")


def route_after_refuse(state: RouteView) -> Literal["act", "think", "__end__"]:
    """Go on, or replay a call whose outcome is unknown before the run may stop."""
    return _move(state, ("act", "think", "__end__"), "refuse")
