"""Make any value safe to keep in a run's state: plain JSON types, bounded, never raising.

Whatever enters state is written to checkpoints (msgpack) and shown to the model (JSON), so
tool results and model-proposed arguments are normalised to ``dict`` (str keys), ``list``,
``str``, ``int`` (64-bit), finite ``float``, ``bool`` and ``None``. Lossless conversions
keep the value's text (``Decimal("2.50")`` -> ``"2.50"``, datetimes -> ISO 8601); anything
lossy leaves a visible marker in angle brackets, e.g. ``"<bytes: 12 bytes, base64 AAEC...>"``,
``"<truncated: nesting deeper than 32>"``, ``"<cycle>"``, ``"<int: 70 bits>"``.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import enum
import math
import uuid
from collections.abc import Mapping, Sequence, Set
from decimal import Decimal
from pathlib import PurePath
from typing import Any

from pydantic import BaseModel

JsonValue = dict[str, "JsonValue"] | list["JsonValue"] | str | int | float | bool | None

MAX_DEPTH = 32
"""Default nesting cap; far below Python's recursion limit, far above any sane tool result."""
MAX_ITEMS = 10_000
"""Default cap on the items of one list or dict."""
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_PREVIEW_BYTES = 48
_REPR_CHARS = 120


def json_safe(value: Any, *, max_depth: int = MAX_DEPTH, max_items: int = MAX_ITEMS) -> JsonValue:
    """``value`` as plain JSON data; never raises (see the module docstring for the markers).

    Nesting deeper than ``max_depth`` and containers longer than ``max_items`` are cut with
    a marker. Use it on anything untrusted before it enters state: tool results and the
    arguments a model proposes (a 100-bit integer there would otherwise crash a checkpoint).
    """
    return _Normaliser(max_depth, max_items).convert(value, 0)


class _Normaliser:
    def __init__(self, max_depth: int, max_items: int) -> None:
        self.max_depth, self.max_items = max_depth, max_items
        self.path: set[int] = set()  # ids of the containers being converted, to spot cycles

    def convert(self, value: Any, depth: int) -> JsonValue:
        try:
            return self._convert(value, depth)
        except Exception as exc:  # a hostile __iter__, __getattr__ or property
            return f"<{_type_name(value)}: unreadable ({type(exc).__name__})>"

    def _convert(self, value: Any, depth: int) -> JsonValue:
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, str):
            return _text(value)
        if isinstance(value, int):
            return _integer(value)
        if isinstance(value, float):
            return value if math.isfinite(value) else f"<float: {value}>"
        scalar = _scalar(value)
        if scalar is not None:
            return scalar
        if depth >= self.max_depth:
            return f"<truncated: nesting deeper than {self.max_depth}>"
        if id(value) in self.path:
            return "<cycle>"
        self.path.add(id(value))
        try:
            return self._container(value, depth + 1)
        finally:
            self.path.discard(id(value))

    def _container(self, value: Any, depth: int) -> JsonValue:
        if isinstance(value, BaseModel):
            return self._mapping(dict(value), depth)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
            return self._mapping(fields, depth)
        if callable(getattr(value, "_asdict", None)):  # namedtuple, SQLAlchemy Row
            return self._mapping(value._asdict(), depth)
        if isinstance(value, Mapping):
            return self._mapping(value, depth)
        if isinstance(value, Set):
            return self._sequence(sorted(value, key=_short_repr), depth)
        if isinstance(value, Sequence):
            return self._sequence(value, depth)
        return f"<{_type_name(value)} object: {_short_repr(value)}>"

    def _mapping(self, value: Mapping[Any, Any], depth: int) -> JsonValue:
        out: dict[str, JsonValue] = {}
        for index, (key, item) in enumerate(value.items()):
            if index == self.max_items:
                out["<truncated>"] = f"{len(value) - index} more keys"
                break
            out[_key(key)] = self.convert(item, depth)
        return out

    def _sequence(self, value: Sequence[Any], depth: int) -> JsonValue:
        out = [self.convert(item, depth) for item in value[: self.max_items]]
        if len(value) > self.max_items:
            out.append(f"<truncated: {len(value) - self.max_items} more items>")
        return out


def _scalar(value: Any) -> JsonValue:
    """Scalars with a standard text form; None when ``value`` is not one of them."""
    if isinstance(value, Decimal):
        return str(value) if value.is_finite() else f"<decimal: {value}>"
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return f"<timedelta: {value.total_seconds()} s>"
    if isinstance(value, uuid.UUID | PurePath):
        return str(value)
    if isinstance(value, enum.Enum):
        return json_safe(value.value, max_depth=1)
    if isinstance(value, bytes | bytearray | memoryview):
        data = bytes(value)
        preview = base64.b64encode(data[:_PREVIEW_BYTES]).decode()
        more = "..." if len(data) > _PREVIEW_BYTES else ""
        return f"<bytes: {len(data)} bytes, base64 {preview}{more}>"
    return None


def _text(value: str) -> str:
    """Text that encodes as UTF-8 (lone surrogates would break msgpack and HTTP)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    return value


def _integer(value: int) -> int | str:
    if INT64_MIN <= value <= INT64_MAX:
        return int(value)  # an int subclass (IntEnum, numpy-like) becomes a plain int
    return f"<int: {value.bit_length()} bits, wider than 64>"


def _key(key: Any) -> str:
    if isinstance(key, str):
        return _text(key)
    if key is None or isinstance(key, bool | float) or (isinstance(key, int) and _fits(key)):
        return str(key)
    safe = json_safe(key, max_depth=1)
    return safe if isinstance(safe, str) else f"<{_type_name(key)} key>"


def _fits(value: int) -> bool:
    return INT64_MIN <= value <= INT64_MAX


def _type_name(value: Any) -> str:
    try:
        return type(value).__name__
    except Exception:  # pragma: no cover - type() of an object always has a name
        return "object"


def _short_repr(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:
        return "unprintable"
    text = _text(text)
    return text if len(text) <= _REPR_CHARS else f"{text[:_REPR_CHARS]}..."
