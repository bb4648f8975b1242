"""Pluggable rules: user code that judges a tool result without editing tether.

A rule is a plain function ``rule(state, result, settings) -> RuleDecision | None``, called
after every tool run with the state as it stands (read it only: a rule's changes to it are
not saved) and a copy of the result. ``None`` or ``continue`` changes nothing; ``retry``
runs the same call again in place (with backoff, within the ``tool_attempts`` setting);
``switch`` counts the step as failed and tells the model why; ``stop`` ends the run with the
decision's reason and status (``failed`` unless it names ``partial`` or ``no_progress``:
only a final answer completes a run). The first rule that returns something other than
``continue`` wins (see ``tether.decisions.policy.judge``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, NotRequired

from typing_extensions import TypedDict

from tether.settings import AgentSettings
from tether.state import AgentState, ToolResult
from tether.vocabulary import Status


class RuleDecision(TypedDict):
    action: Literal["continue", "retry", "switch", "stop"]
    reason: NotRequired[str]
    status: NotRequired[Status]  # for stop


Rule = Callable[[AgentState, ToolResult, AgentSettings], RuleDecision | None]


def low_confidence(
    state: AgentState, result: ToolResult, settings: AgentSettings
) -> RuleDecision | None:
    """A successful result whose meta.confidence_score is below min_confidence is a failure."""
    if result["status"] != "success":
        return None
    score = result["meta"].get("confidence_score")
    if not isinstance(score, int | float) or score >= settings.min_confidence:
        return None
    return {
        "action": "switch",
        "reason": f"confidence_score {score} is below min_confidence {settings.min_confidence}",
    }


DEFAULT_RULES: tuple[Rule, ...] = (low_confidence,)
