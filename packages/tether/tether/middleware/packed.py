"""The private fields of a composed middleware's parts, kept in one state channel.

LangGraph copies every channel of the state for each branch it takes (twice a step in
``create_agent``): nine private fields, each a channel, cost more than the controls that keep
them.
:class:`~tether.middleware.TetherMiddleware` keeps its parts' own private fields in one
channel, :data:`PACKED`, and each part reads and writes the state as it would with a channel
per field: the fields are unpacked into the state a part reads, and a part's update of them
is packed on the way out, each field folded by its own reducer as its channel would.

The fields every tether middleware shares (:class:`~tether.middleware.TetherState`'s) and
those in the agent's output stay channels of their own: a tether middleware outside the
composition (the repeat guard after LangChain's retries) reads and writes them too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import (
    Annotated,
    Any,
    NotRequired,
    Required,
    TypedDict,
    cast,
    get_args,
    get_origin,
    get_type_hints,
)

from langchain.agents.middleware.types import PrivateStateAttr
from langgraph.types import Command, Overwrite

from tether.middleware.common import TetherState
from tether.middleware.kept import KEPT_FROM, Reduced, reused

_COMMAND_FIELDS = sorted(field.name for field in dataclasses.fields(Command))
_COMMAND_AS_KNOWN = _COMMAND_FIELDS == ["goto", "graph", "resume", "update"]
"""Command has the fields this was written for: built with them, not replaced (half the cost)."""
PACKED = "tether_private"
"""The state key holding the composed parts' own private fields."""
Reducer = Callable[[Any, Any], Any]


@dataclasses.dataclass(frozen=True)
class Field:
    """How a packed field takes a write: its reducer (None: the write replaces it), and the
    value its channel would hold before any write (None: no value)."""

    reducer: Reducer | None = None
    blank: Callable[[], Any] | None = None

    def folded(self, packed: Mapping[str, Any], name: str, value: Any) -> Any:
        """The field after ``value`` is written, as a LangGraph channel takes it."""
        if isinstance(value, Overwrite):
            return value.value
        if self.reducer is None:
            return value
        if name in packed:
            return self.reducer(packed[name], value)
        return value if self.blank is None else self.reducer(self.blank(), value)


def field_of(hint: Any) -> Field | None:
    """The packed field a state annotation declares, or None for a field that stays a
    channel (one that is not private)."""
    while get_origin(hint) in (NotRequired, Required):
        hint = get_args(hint)[0]
    meta: tuple[Any, ...] = getattr(hint, "__metadata__", ())
    if PrivateStateAttr not in meta:
        return None
    reducer = meta[-1] if callable(meta[-1]) and not isinstance(meta[-1], type) else None
    if reducer is None:
        return Field()
    reducer = getattr(reducer, KEPT_FROM, reducer)  # the packed channel keeps its results
    kind = get_origin(hint.__origin__) or hint.__origin__
    try:
        kind()
    except TypeError:  # an optional value: its channel starts empty
        return Field(reducer)
    return Field(reducer, kind)


class Packing:
    """Which of ``hints`` (a composed state's fields) are packed, and how."""

    def __init__(self, hints: Mapping[str, Any]) -> None:
        shared = get_type_hints(TetherState, include_extras=True)
        fields = {name: field_of(hint) for name, hint in hints.items() if name not in shared}
        self.fields = {name: field for name, field in fields.items() if field is not None}
        self.reduce: Reducer = reused(self._reduce)

    def schema(self, name: str, hints: Mapping[str, Any]) -> type:
        """The state schema: the fields not packed, and the packed channel."""
        kept = {key: hint for key, hint in hints.items() if key not in self.fields}
        if self.fields:
            channel = Reduced(dict, self.reduce)
            kept[PACKED] = NotRequired[Annotated[dict[str, Any], PrivateStateAttr, channel]]
        return cast(type, TypedDict(name, kept))  # type: ignore[operator]

    def view(self, state: Any) -> Any:
        """The state as a part reads it: every packed field a key of its own."""
        packed = state.get(PACKED) if isinstance(state, Mapping) else None
        return {**state, **packed} if packed else state

    def update(self, update: dict[str, Any]) -> dict[str, Any]:
        """A part's update as the state takes it: its packed fields under :data:`PACKED`."""
        own = {name: value for name, value in update.items() if name in self.fields}
        if not own:
            return update
        rest = {name: value for name, value in update.items() if name not in self.fields}
        return {**rest, PACKED: own}

    def command(self, result: Any) -> Any:
        """A tool call's answer with its update packed (each of a list's; any other answer as
        it is)."""
        if isinstance(result, list):
            return [self.command(item) for item in result]
        if not isinstance(result, Command) or not isinstance(result.update, dict):
            return result
        update = self.update(result.update)
        if update is result.update:
            return result
        if not _COMMAND_AS_KNOWN:
            return dataclasses.replace(result, update=update)
        return Command(graph=result.graph, update=update, resume=result.resume, goto=result.goto)

    def _reduce(self, current: dict[str, Any] | None, update: dict[str, Any]) -> dict[str, Any]:
        packed = dict(current or {})
        for name, value in update.items():
            packed[name] = self.fields[name].folded(packed, name, value)
        return packed
