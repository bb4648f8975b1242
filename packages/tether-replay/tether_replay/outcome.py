"""What tether did to one recorded run: the record ``--json`` writes, one object per run."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Face = Literal["loop", "middleware"]

Cause = Literal["budget", "step_cap", "breaker", "repeat", "same_reply", "rule", "cancel", "other"]
"""Why a replayed run was stopped, read from the reason tether gave."""

_CAUSES: tuple[tuple[str, Cause], ...] = (
    ("cancelled:", "cancel"),
    ("rule ", "rule"),
    ("token budget", "budget"),
    ("step cap", "step_cap"),
    ("circuit breaker", "breaker"),
    ("the same unusable reply", "same_reply"),
    ("proposed with the same arguments", "repeat"),
)


def cause_of(reason: str) -> Cause:
    """The cause a stop's reason names. The reason is tether's own (a model's or a tool's
    words appear in it only after its opening words, which are matched here)."""
    for words, cause in _CAUSES:
        if reason.startswith(words) or (cause == "repeat" and words in reason):
            return cause
    return "other"


@dataclass
class Point:
    """One thing tether did at one logged model call (1-based)."""

    call: int
    what: Literal["stop", "note", "sent_back", "recall", "refused", "withheld"]
    detail: str


@dataclass
class RunOutcome:
    """One recorded run replayed through one of tether's faces."""

    uid: str
    cohort: str
    reward: float | None
    face: Face
    calls: int
    """Model calls the log holds."""
    turns: int
    """User turns the log holds."""
    stopped: bool = False
    """tether ended a turn before its logged end (with a status other than completed)."""
    stop_call: int | None = None
    """The logged model call (1-based) tether stopped at: the first it did not give."""
    status: str = "completed"
    """The status of the last turn replayed (the stopped one, if any)."""
    cause: Cause | None = None
    reason: str | None = None
    cuts_work: bool = False
    """The stop cut a logged tool call that succeeded."""
    cuts_write: bool = False
    """The stop cut a logged write that succeeded."""
    final_sent_back: bool = False
    """An answer or a reply of the run was sent back by the final-answer check."""
    last_sent_back: bool = False
    """The run's last answer (its final one) was sent back."""
    notes: int = 0
    """Controller notes tether added to a prompt (the sent-back ones included)."""
    recalls: int = 0
    """Calls answered from their earlier record instead of being run."""
    stale_recalls: int = 0
    """...of which a write had succeeded since the record was made."""
    refusals: int = 0
    """Calls tether refused to run."""
    withheld_replies: int = 0
    """Text replies given while tether asked for a tool call (look_first)."""
    points: list[Point] = field(default_factory=list)
    """Every point above, in order."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def mark(self, call: int, what: Any, detail: str) -> None:
        self.points.append(Point(call, what, detail))
