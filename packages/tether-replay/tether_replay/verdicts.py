"""What both faces conclude the same way from a replayed run: where a stop cut the log, what
it cut, and whether a recall answered from a record a write had made stale. Kept in one place
so that the loop and the middleware faces give their fields one meaning."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tether_replay.outcome import Face, RunOutcome, cause_of
from tether_replay.player import Player
from tether_replay.records import Conversation, Reply
from tether_replay.tools import ToolSpec

Ran = tuple[str, str, bool]
"""One tool run: (tool, the call's key, whether it succeeded)."""


def blank_outcome(conversation: Conversation, face: Face) -> RunOutcome:
    """The outcome of ``conversation`` before anything tether did is read into it."""
    return RunOutcome(
        uid=conversation.uid,
        cohort=conversation.cohort,
        reward=conversation.reward,
        face=face,
        calls=conversation.calls,
        turns=len(conversation.turns),
    )


def write_names(specs: Sequence[ToolSpec]) -> set[str]:
    """The tools whose success changes something (a recall after one may be stale)."""
    return {spec.name for spec in specs if spec.side_effects}


def stale(ran: Sequence[Ran], tool: str, key: str, writes: set[str]) -> bool:
    """A write succeeded after the last successful run of this call (``ran`` in run order)."""
    last = max((i for i, (n, k, ok) in enumerate(ran) if n == tool and k == key and ok), default=-1)
    return last >= 0 and any(ok and n in writes for n, _, ok in ran[last + 1 :])


def cut(player: Player, later: list[Reply]) -> list[Reply]:
    """The logged replies a stop leaves out: the rest of the turn and every later turn."""
    return [*player.left_in_turn(), *later]


def stop(
    outcome: RunOutcome,
    status: str,
    reason: str,
    player: Player,
    cut: list[Reply],
    turn: Any,
    conversation: Conversation,
    writes: set[str],
) -> None:
    """Mark the stop: where it fell, why, and whether it cut logged work (or a write) that
    succeeded."""
    outcome.stopped = True
    outcome.stop_call = conversation.calls - len(cut) + 1
    outcome.cause = cause_of(reason)
    outcome.reason = reason
    results = {key: value for t in conversation.turns for key, value in t.results.items()}
    cut_calls = [call for reply in cut for call in reply.calls]
    worked = [c for c in cut_calls if (r := results.get(c.id)) is not None and not r.error]
    outcome.cuts_work = bool(worked)
    outcome.cuts_write = any(c.name in writes for c in worked)
    outcome.mark(outcome.stop_call, "stop", f"{status}: {reason}"[:300])


def withheld(outcome: RunOutcome, player: Player) -> None:
    """Fold in the text replies the player gave while tether asked for a tool call."""
    for index in player.withheld:
        outcome.withheld_replies += 1
        outcome.mark(index, "withheld", "a text reply while tether asked for a tool call")
    player.withheld.clear()


def last_sent_back(outcome: RunOutcome) -> bool:
    """The run's last logged reply (its final answer) was sent back."""
    last = outcome.calls
    return any(p.what == "sent_back" and p.call == last for p in outcome.points)
