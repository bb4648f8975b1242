"""What tether's middleware keep so as to do less at every call: the readings of a tool
call, a reducer's last results, channels copied as they are, the hooks' signatures."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, Self, TypeVar, cast

from langgraph.channels.binop import BinaryOperatorAggregate

T = TypeVar("T")
C = TypeVar("C", bound=type)
CALL_HOOKS = ("wrap_model_call", "awrap_model_call", "wrap_tool_call", "awrap_tool_call")


def signed(cls: C) -> C:
    """The middleware class with its call hooks' signatures worked out once: ``create_agent``
    runs each hook inside a LangSmith span, which reads the signature of what it wraps on
    every call, a third of the span's own cost. The signature of a function is kept on it,
    but a bound method's is built anew from it each time: read from a middleware, each hook
    is its own partial (:class:`Hooked`) that keeps its signature."""
    for name in CALL_HOOKS:
        hook = cls.__dict__.get(name)
        if hook is not None and not isinstance(hook, Hooked):
            hook.__signature__ = inspect.signature(hook)
            setattr(cls, name, Hooked(hook))
    return cls


class Hooked:
    """A middleware class's call hook. Read from the class, the function itself; read from a
    middleware, ``functools.partial(function, middleware)`` (a bound method, called in C)
    with the bound signature, kept in the middleware's ``__dict__`` for the next reads (not
    when read through ``super()``: the middleware's class has another hook by that name)."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function
        self.name = function.__name__
        signature = inspect.signature(function)
        self.signature = signature.replace(parameters=list(signature.parameters.values())[1:])

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self.function
        bound = functools.partial(self.function, instance)
        bound.__signature__ = self.signature  # type: ignore[attr-defined]
        if getattr(type(instance), self.name, None) is self.function:
            instance.__dict__[self.name] = bound
        return bound


REDUCED_KEPT = 8
"""Reductions each reducer keeps (the oldest goes first): a step's writes (one per parallel
call), few enough that the states they hold are let go soon (else the garbage collector
runs more often, and longer)."""
R = TypeVar("R", bound=Callable[[Any, Any], Any])


def evict(kept: dict[Any, Any]) -> None:
    """Drop the oldest entry of a memo (all of them, if another thread changed it
    meanwhile: a memo only saves work)."""
    try:
        del kept[next(iter(kept))]
    except (RuntimeError, KeyError, StopIteration):
        kept.clear()


def reused(reducer: R) -> R:
    """``reducer``, its result kept for the same current value and update (the same objects,
    held, so no other object has their ids). LangGraph applies a node's writes twice, for the
    branch that reads the state after the node and then into the state itself, and folding a
    tool call into the run's grounds costs more than the rest of the call's own work."""
    kept: dict[tuple[int, int], tuple[Any, Any, Any]] = {}

    @functools.wraps(reducer)
    def reduced(current: Any, update: Any) -> Any:
        key = (id(current), id(update))
        hit = kept.get(key)
        if hit is not None and hit[0] is current and hit[1] is update:
            return hit[2]
        value = reducer(current, update)
        if len(kept) >= REDUCED_KEPT:
            evict(kept)
        kept[key] = (current, update, value)
        return value

    setattr(reduced, KEPT_FROM, reducer)
    return cast(R, reduced)


KEPT_FROM = "kept_from"
"""Attribute of a :func:`reused` reducer: the reducer it keeps the results of."""


_SLOTS = tuple(
    dict.fromkeys(
        s for c in BinaryOperatorAggregate.__mro__ for s in c.__dict__.get("__slots__", ())
    )
)


_KNOWN = ("value", "operator", "key", "typ")
"""The channel's slots in the LangGraph this was written for (any other: copied in a loop)."""


class Reduced(BinaryOperatorAggregate[Any]):
    """A field's channel with a reducer, copied as it is: LangGraph copies every channel
    for each branch it takes, and its own copy works the value's type out again (raising
    and catching an error for an optional one)."""

    __slots__ = ()

    def copy(self) -> Self:
        new = object.__new__(self.__class__)
        if _SLOTS == _KNOWN:  # the fields, set one by one: a loop costs more than the copy
            new.key, new.typ = self.key, self.typ
            new.value, new.operator = self.value, self.operator
            return new
        for name in _SLOTS:
            object.__setattr__(new, name, getattr(self, name))
        return new


MEMO_SIZE = 16
"""Readings kept (the oldest goes first): five calls' worth (a call is read again only
while its wrappers run), few enough that what they hold is let go soon."""
_memo: dict[tuple[Any, ...], tuple[tuple[Any, ...], Any]] = {}


def memo(kind: Any, objects: tuple[Any, ...], make: Callable[..., T], *args: Any) -> T:
    """``make(*args)``, computed once for the same ``objects`` (the same objects, not equal
    ones): each tether middleware reads the same tool call and its answer, and reads them
    alike."""
    key = (kind, *map(id, objects))
    hit = _memo.get(key)
    if hit is not None:  # the memo holds the objects, so no other object has their ids
        return hit[1]  # type: ignore[no-any-return]
    value = make(*args)
    if len(_memo) >= MEMO_SIZE:
        evict(_memo)
    _memo[key] = (objects, value)
    return value
