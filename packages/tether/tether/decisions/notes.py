"""The notes tether writes into the next prompt before it stops a run, and what they may quote.

A note is worth sending only if it tells the model something it can act on: which call, and
what the run already knows of it. But tool output and model output are untrusted, so a note
never quotes their text. It may hold tether's own words, registered tool names, and
:func:`plain_values`: a result's scalar values that are single tokens (ids, numbers, one-word
statuses) under identifier keys, and the words of an error that are in tether's own error
vocabulary. A token cannot carry an instruction, so nothing a tool or the model writes becomes
a sentence of a note.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from tether.vocabulary import CAUSES

PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}")
PLAIN_VALUE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-:/@+]{0,39}")
VALUES_SHOWN = 6
"""At most this many values of a result go into a note."""

ERROR_WORDS = frozenset(
    """
    required missing invalid unknown expected found exist exists allowed permitted denied
    timeout timed unavailable failed limit exceeded insufficient format type field argument
    arguments value number string integer cannot already status state empty negative range
    duplicate conflict locked closed expired refused rejected parse json schema match
    """.split()  # noqa: SIM905  (a word list reads better as words)
)
"""Words an error may contribute to a note: the vocabulary of errors, not of instructions."""
_WORD = re.compile(r"[^\W\d_]{4,}")


def plain_values(data: Any, limit: int = VALUES_SHOWN) -> list[str]:
    """``key=value`` for the first scalar leaves of ``data`` whose key and value are plain
    tokens (see the module docstring); other leaves are left out, never quoted."""
    found: list[str] = []
    for key, value in _leaves(data, "value"):
        text = str(value)
        if PLAIN_KEY.fullmatch(key) and PLAIN_VALUE.fullmatch(text):
            pair = f"{key}={text}"
            if pair not in found:
                found.append(pair)
        if len(found) >= limit:
            break
    return found


def error_words(message: str, limit: int = 4) -> list[str]:
    """The words of an error message that are in :data:`ERROR_WORDS`, in order, once each."""
    words: list[str] = []
    for word in _WORD.findall(message):
        lowered = word.lower()
        if lowered in ERROR_WORDS and lowered not in words:
            words.append(lowered)
    return words[:limit]


def _leaves(data: Any, key: str) -> Iterator[tuple[str, Any]]:
    if isinstance(data, dict):
        for name, value in data.items():
            yield from _leaves(value, str(name))
    elif isinstance(data, list | tuple):
        for value in data:
            yield from _leaves(value, key)
    elif data is not None and not isinstance(data, bool):
        yield key, data


# --- the notes ----------------------------------------------------------------------------------


def recall_note(tool: str, step: int, known: list[str], last: bool) -> str:
    """For a call that already succeeded, proposed again: it was not run, here is what it
    returned, do something else. ``last``: proposing it once more ends the run."""
    values = f" It returned: {', '.join(known)}." if known else ""
    ending = " Proposing it again ends the run." if last else ""
    return (
        f"{tool} was already called with these exact arguments at step {step} and succeeded, "
        f"so it was not run again.{values} Use that result: call another tool, or give the "
        f"final answer.{ending}"
    )


def failure_note(
    failures: Sequence[tuple[int, str, str | None, list[str]]], ends_next: bool
) -> str:
    """After failed steps in a row, which failed and how; ``ends_next``: one more failed step
    opens the circuit breaker. Each failure is (step, kind, registered tool or None, words
    of its error)."""
    listed = "; ".join(_failure(*failure) for failure in failures)
    ending = " One more failed step ends the run." if ends_next else ""
    what = (
        f"Your last {len(failures)} steps failed" if len(failures) > 1 else "Your last step failed"
    )
    return (
        f"{what} ({listed}). Do not repeat a failed call: use another tool, or the same tool "
        f"with corrected arguments.{ending}"
    )


def _failure(step: int, kind: str, tool: str | None, words: list[str]) -> str:
    what = kind.replace("_", " ")
    said = f", its error says: {' '.join(words)}" if words else ""
    return f"step {step}, {tool} {what}{said}" if tool else f"step {step}, {what}{said}"


def same_reply_note(ends_next: bool) -> str:
    """After the same unreadable reply twice in a row."""
    ending = " Sending it again ends the run." if ends_next else ""
    return (
        "Your last two replies were the same and neither could be used. Write a different "
        f"reply in the expected format.{ending}"
    )


def cap_ending(reason: str, answer: str) -> str:
    """A cap's reason, saying whether the last call, asked for the answer, gave one."""
    got = "an answer was asked for at the cap" if answer else "asked at the cap for an answer"
    return f"{reason}; {got}" + ("" if answer else ", the reply gave none")


def cap_note(cause: str) -> str:
    """The last call's note at a cap: no tools, the best answer from what is known, and why,
    by the stop's cause (:data:`tether.vocabulary.CAUSES`)."""
    why = CAUSES.get(cause, "the run must end")
    return (
        f"The run is ending: {why}. No more tool calls. Give your final answer now, from what "
        "the tool results above show; say plainly what is still unknown or not done."
    )
