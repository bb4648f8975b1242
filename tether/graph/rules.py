"""Pluggable rules: user code that judges a tool result without editing tether.

A rule is a plain function ``rule(state, result, settings) -> RuleDecision | None``. It is
called after every tool run with the state and the result envelope (``None`` when the step ran
no tool). ``None`` or ``continue`` changes nothing; ``retry`` runs the same call again in place
(with backoff, within ``tool_attempts``); ``switch`` counts the step as failed and tells the
model why; ``stop`` ends the run with the decision's status and reason. The first rule that
returns something other than ``continue`` wins.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, TypedDict

from tether.graph.state import AgentState, Status
from tether.settings import AgentSettings


class RuleDecision(TypedDict, total=False):
    action: Literal["continue", "retry", "switch", "stop"]
    reason: str
    status: Status  # for stop; default "failed"
    rule: str  # filled in by tether: the rule's name


Rule = Callable[[AgentState, dict[str, Any] | None, AgentSettings], RuleDecision | None]


def low_confidence(
    state: AgentState, result: dict[str, Any] | None, settings: AgentSettings
) -> RuleDecision | None:
    """A successful result whose meta.confidence_score is below min_confidence is a failure."""
    if not result or result.get("status") != "success":
        return None
    score = result.get("meta", {}).get("confidence_score")
    if not isinstance(score, int | float) or score >= settings.min_confidence:
        return None
    return {
        "action": "switch",
        "reason": f"confidence_score {score} is below min_confidence {settings.min_confidence}",
    }


DEFAULT_RULES: tuple[Rule, ...] = (low_confidence,)


def apply_rules(
    rules: Sequence[Rule],
    state: AgentState,
    result: dict[str, Any] | None,
    settings: AgentSettings,
) -> RuleDecision | None:
    """The first decisive rule's decision, tagged with the rule's name."""
    for rule in rules:
        decision = rule(state, result, settings)
        if decision and decision.get("action", "continue") != "continue":
            return {**decision, "rule": getattr(rule, "__name__", type(rule).__name__)}
    return None
