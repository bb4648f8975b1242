"""What an answer states (ids, numbers, statuses) and what a run's tool results back.

One implementation for two readers: the loop's check before a final answer is taken
(:mod:`tether.decisions.final_check`) and the benchmark's judge. Nothing here trusts a
sentence of the answer: every id, number and status it states must come from the task or
from the data a successful tool call returned. A call grounds the answer only when it is
connected to the task: it has no arguments, or one of its argument values comes from the
task or from an earlier connected call's data (an id must match an id), so facts fetched
about something else (a lookup of another order) ground nothing.

What the successful calls established is folded, call by call, into :class:`Grounds`: plain
JSON data small enough to keep in a run's state, so the loop needs only the latest record,
not every result (its tool buffer keeps the last few). The judge folds a finished run's
calls the same way.

Text is compared after NFKC (full-width digits and letters become ASCII), case folding and
whitespace collapsing; numbers are read out of the text and compared by value, so
"2,328.0200" states 2328.02. Which words are statuses is a :class:`Vocabulary`: the loop's
default (:func:`tether.decisions.final_check.status_vocabulary`) knows only the values tools
report under ``status`` keys and the ``enum`` values of the tools' status arguments; a world
with words of its own (two languages, statuses that imply others) passes its own.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Context, Decimal, localcontext
from typing import Any, NamedTuple

from typing_extensions import TypedDict

from tether.decisions.derived import TOLERANCE, backed
from tether.decisions.reading import ids_in, normalise, numbers_in, without_ids

__all__ = [
    "Call",
    "Evidence",
    "Grounds",
    "Stated",
    "Unbacked",
    "Vocabulary",
    "empty_grounds",
    "fold",
    "heard",
    "ids_in",
    "normalise",
    "numbers_in",
    "stated_in",
    "statuses_in",
    "tried",
    "unbacked",
    "ungrounded_numbers",
]

_PERCENT = re.compile(r"(?<!\d)(\d+(?:\.\d+)?)\s*%")
NEGATION = re.compile(
    r"(\bnot\b|n't|\bnever\b|\bno longer\b|\byet\b|\bcannot\b|\bunable\b|未|没|不|无法)"
    r"[^.;,。；，]{0,14}$"
)
"""A negation just before a word ("not yet paid", "cannot be cancelled", "未支付"): the word
is not claimed."""
_ARITHMETIC = Context(traps=[])
"""Numbers are compared in a context that never raises: a number too long for the default
context (a million digits) overflows to infinity and matches nothing."""
MAX_VALUE_CHARS = 200
"""Text values of results longer than this are not kept for matching argument values."""


# --- reading text -------------------------------------------------------------------------


@dataclass(frozen=True)
class Vocabulary:
    """Which words state a status, and what a status in tool data establishes.

    ``words`` maps a word an answer may use (compared normalised) to the status it claims;
    ``results`` maps a value under a ``status`` key in tool data to the statuses it
    establishes (a value not listed establishes itself)."""

    words: Mapping[str, str] = field(default_factory=dict)
    results: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @functools.cached_property
    def lookup(self) -> dict[str, str]:
        """The status each word claims, by the word normalised."""
        return {normalise(word): status for word, status in self.words.items() if word.strip()}

    @functools.cached_property
    def pattern(self) -> re.Pattern[str] | None:
        """Any of the words in normalised text (longest first; a Latin word as a whole word)."""
        words = sorted(self.lookup, key=len, reverse=True)
        if not words:
            return None
        edge = {True: r"\b", False: ""}
        return re.compile(
            "|".join(
                edge[w[0].isascii() and w[0].isalnum()]
                + re.escape(w)
                + edge[w[-1].isascii() and w[-1].isalnum()]
                for w in words
            )
        )

    def established(self, value: str) -> tuple[str, ...]:
        """The statuses a ``status`` value in tool data establishes."""
        return self.results.get(value, (value,))


def statuses_in(text: str, vocabulary: Vocabulary) -> set[str]:
    """Statuses the text claims, not those it negates ("not yet paid", "cannot be cancelled")."""
    plain = normalise(text)
    pattern = vocabulary.pattern
    claimed: set[str] = set()
    if pattern is None:
        return claimed
    for match in pattern.finditer(plain):
        if NEGATION.search(plain[max(0, match.start() - 20) : match.start()]):
            continue
        claimed.add(vocabulary.lookup[match.group()])
    return claimed


@dataclass(frozen=True)
class Stated:
    """What an answer states: ids, numbers (ids, emails and list markers left out), statuses."""

    ids: frozenset[str]
    numbers: tuple[Decimal, ...]
    statuses: frozenset[str]


def stated_in(answer: str, vocabulary: Vocabulary) -> Stated:
    """The ids, numbers and statuses ``answer`` states."""
    return Stated(
        ids=frozenset(ids_in(answer)),
        numbers=tuple(numbers_in(without_ids(answer))),
        statuses=frozenset(statuses_in(answer, vocabulary)),
    )


# --- what the calls established --------------------------------------------------------------


class Call(NamedTuple):
    """One successful tool call: the tool's name, its arguments and the data it returned."""

    tool: str
    arguments: Any
    data: Any


class Grounds(TypedDict):
    """What a run's successful tool calls established, folded call by call (:func:`fold`).

    Plain JSON data, so the loop can keep it in its state. ``ids``, ``numbers``,
    ``percents``, ``values``, ``named`` and ``reported`` come from connected calls only (see
    the module docstring); ``tools`` and ``statuses`` from every successful call."""

    tools: list[str]  # every tool that succeeded, in the order of its first success
    tried: list[str]  # every tool called, whatever the outcome
    ids: list[str]
    numbers: list[str]  # as written by Decimal, each once
    percents: list[str]  # the numbers written before a % sign
    values: list[str]  # text values, normalised, each at most MAX_VALUE_CHARS long
    named: dict[str, list[str]]  # an id a call names -> status values its data reported
    reported: list[str]  # every value under a status key in a connected call's data
    statuses: list[str]  # every value under a status key in any successful call's data


def empty_grounds() -> Grounds:
    return {
        "tools": [],
        "tried": [],
        "ids": [],
        "numbers": [],
        "percents": [],
        "values": [],
        "named": {},
        "reported": [],
        "statuses": [],
    }


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _leaves(item)
    elif value is not None:
        yield value


def _status_values(value: Any) -> Iterator[str]:
    """Every string under a ``status`` key, anywhere in the data."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "status" and isinstance(item, str):
                yield item
            else:
                yield from _status_values(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _status_values(item)


_dump = json.JSONEncoder(ensure_ascii=False, default=str).encode  # not one encoder per call


def _added(items: list[str], new: Iterable[str]) -> list[str]:
    return list(dict.fromkeys([*items, *new]))


def _reached(value: Any, task: str, grounds: Grounds) -> bool:
    """An argument value the task or an earlier connected call's data already stated."""
    text = str(value)
    ids = ids_in(text)
    if ids:
        return bool(ids & (ids_in(task) | set(grounds["ids"])))
    needle = normalise(text)
    if needle in normalise(task) or any(needle in held for held in grounds["values"]):
        return True
    known = [*numbers_in(task), *map(Decimal, grounds["numbers"])]
    with localcontext(_ARITHMETIC):
        return any(abs(n - k) <= TOLERANCE for n in numbers_in(text) for k in known)


def fold(grounds: Grounds | None, task: str, call: Call) -> Grounds:
    """``grounds`` with one more successful call of the run on ``task`` (a new record)."""
    old = grounds or empty_grounds()
    statuses = list(_status_values(call.data))
    new: Grounds = {
        **old,
        "tools": _added(old["tools"], [call.tool]),
        "tried": _added(old["tried"], [call.tool]),
        "statuses": _added(old["statuses"], statuses),
    }
    arguments = list(_leaves(call.arguments))
    if arguments and not any(_reached(value, task, old) for value in arguments):
        return new
    text = _dump(call.data)
    leaves = list(_leaves(call.data))
    held = (normalise(v if isinstance(v, str) else _dump(v)) for v in leaves)
    new["ids"] = sorted(set(old["ids"]) | ids_in(text))
    new["numbers"] = _added(old["numbers"], (str(n) for n in numbers_in(text)))
    new["percents"] = _added(old["percents"], _PERCENT.findall(text))
    new["values"] = _added(old["values"], (v for v in held if len(v) <= MAX_VALUE_CHARS))
    new["reported"] = _added(old["reported"], statuses)
    new["named"] = {key: list(found) for key, found in old["named"].items()}
    for name in {str(v) for v in [*arguments, *leaves]} if statuses else ():
        if name in ids_in(name):
            new["named"][name] = _added(new["named"].get(name, []), statuses)
    return new


def heard(grounds: Grounds | None, text: str) -> Grounds:
    """``grounds`` with the ids and numbers a user message states (a new record): in a
    conversation what the user said in an earlier message backs a later answer, and a call
    whose arguments came from it is connected."""
    old = grounds or empty_grounds()
    numbers = _added(old["numbers"], (str(n) for n in numbers_in(text)))
    ids = sorted(set(old["ids"]) | ids_in(text))
    return {
        **old,
        "ids": ids,
        "numbers": numbers,
        "percents": _added(old["percents"], _PERCENT.findall(text)),
    }


def tried(grounds: Grounds | None, tool: str) -> Grounds:
    """``grounds`` with ``tool`` called, whatever the outcome (a new record)."""
    old = grounds or empty_grounds()
    return {**old, "tried": _added(old["tried"], [tool])}


# --- what backs an answer -------------------------------------------------------------------


@dataclass(frozen=True)
class Evidence:
    """The task and what the run's successful calls established about it."""

    task: str
    grounds: Grounds = field(default_factory=empty_grounds)

    @classmethod
    def of(cls, task: str, calls: Iterable[Call]) -> Evidence:
        """Evidence from a run's successful calls, in the order they were made."""
        grounds = empty_grounds()
        for call in calls:
            grounds = fold(grounds, task, call)
        return cls(task, grounds)

    def ids(self) -> set[str]:
        return ids_in(self.task) | set(self.grounds["ids"])

    def numbers(self) -> list[Decimal]:
        return [*numbers_in(self.task), *map(Decimal, self.grounds["numbers"])]

    def percents(self) -> set[Decimal]:
        found = [*_PERCENT.findall(self.task), *self.grounds["percents"]]
        return {Decimal(p) for p in found}

    def statuses_about(self, ids: Iterable[str], vocabulary: Vocabulary) -> set[str]:
        """Statuses connected calls that name one of ``ids`` reported, as ``vocabulary``
        reads them."""
        named = self.grounds["named"]
        values = {value for name in ids for value in named.get(name, [])}
        return {status for value in values for status in vocabulary.established(value)}


def ungrounded_numbers(numbers: Sequence[Decimal], evidence: Evidence) -> list[Decimal]:
    """The numbers no tool returned and the task does not state (within 0.01).

    A percentage counts as grounded when its rate (or one minus it) was returned.
    """
    with localcontext(_ARITHMETIC):
        known = sorted(abs(n) for n in evidence.numbers())
        said = {abs(n) for n in numbers_in(evidence.task)}  # a result's, not the task's own
        found = [v for v in (abs(Decimal(n)) for n in evidence.grounds["numbers"]) if v not in said]
        percents = evidence.percents()
        return [n for n in numbers if not backed(abs(n), known, found, percents)]


@dataclass(frozen=True)
class Unbacked:
    """What an answer states that nothing in the run backs."""

    ids: tuple[str, ...] = ()
    numbers: tuple[Decimal, ...] = ()
    statuses: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.ids or self.numbers or self.statuses)


def unbacked(stated: Stated, evidence: Evidence, vocabulary: Vocabulary) -> Unbacked:
    """The ids, numbers and statuses ``stated`` that neither the task nor a connected call
    holds. A status is backed by the task, or by a connected call that names an id the
    answer or the task names."""
    named = stated.ids | ids_in(evidence.task)
    backed = evidence.statuses_about(named, vocabulary) | statuses_in(evidence.task, vocabulary)
    return Unbacked(
        ids=tuple(sorted(stated.ids - evidence.ids())),
        numbers=tuple(ungrounded_numbers(stated.numbers, evidence)),
        statuses=tuple(sorted(stated.statuses - backed)),
    )
