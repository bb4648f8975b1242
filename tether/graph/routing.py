"""Conditional edges: pure functions from (state, settings) to the next node's name.

Their ``Literal`` return types are the graph's edges, so the diagram is read off the code.
"""

from __future__ import annotations

from typing import Literal

from tether.graph import policy
from tether.graph.state import AgentState
from tether.settings import AgentSettings

EDGE_LABELS: dict[tuple[str, str], str] = {
    ("compose", "think"): "within budget",
    ("compose", "finish"): "over budget or cancelled",
    ("think", "act"): "tool call",
    ("think", "approve"): "needs approval",
    ("think", "refuse"): "failed twice",
    ("think", "assess"): "answer, unparsed or repeat",
    ("approve", "act"): "approved",
    ("approve", "assess"): "rejected",
    ("act", "act"): "retry",
    ("act", "assess"): "result",
    ("assess", "compose"): "continue",
    ("assess", "finish"): "stop",
}
"""How each conditional edge is labelled in diagrams and Studio."""


def route_after_compose(state: AgentState, settings: AgentSettings) -> Literal["think", "finish"]:
    """Call the model unless the budget check before the call said stop."""
    return "finish" if state.get("verdict") else "think"


def route_after_think(
    state: AgentState, settings: AgentSettings
) -> Literal["act", "approve", "refuse", "assess"]:
    """Run the proposed call, ask for approval first, refuse it, or go straight to assessment
    (answer, parse failure, or a repeat that would make no progress)."""
    proposal = state.get("proposal")
    if not proposal or proposal["kind"] != "action":
        return "assess"
    fingerprint = proposal["fingerprint"]
    if policy.should_refuse(state, fingerprint):
        return "refuse"
    if policy.is_repeat(state, fingerprint, settings):
        return "assess"
    return "approve" if proposal.get("needs_approval") else "act"


def route_after_approve(state: AgentState, settings: AgentSettings) -> Literal["act", "assess"]:
    """Run an approved (possibly edited) call; a rejection goes back as an observation."""
    return "assess" if state.get("result") is not None else "act"


def route_after_act(state: AgentState, settings: AgentSettings) -> Literal["act", "assess"]:
    """Retry in place (with backoff) a transient failure, or a result a rule wants retried,
    while attempts remain."""
    result = state.get("result") or {}
    meta = result.get("meta", {})
    wants_retry = (result.get("status") == "error" and meta.get("transient")) or (
        meta.get("rule", {}).get("action") == "retry"
    )
    if wants_retry and state.get("tool_attempts", 0) < settings.tool_attempts:
        return "act"
    return "assess"


def route_after_assess(state: AgentState, settings: AgentSettings) -> Literal["compose", "finish"]:
    """Stop when assessment recorded a verdict; otherwise build the next prompt."""
    return "finish" if state.get("verdict") else "compose"
