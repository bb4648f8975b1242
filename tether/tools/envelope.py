"""The one shape every tool result takes, success or failure.

``{"status": "success", "data": ..., "meta": {...}}`` or
``{"status": "error", "message": "...", "meta": {...}}``. ``meta`` carries what the loop
reads (``error_type``, ``transient``, ``latency_s``, ``retry_count``, ``confidence_score``...).
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

ErrorType = Literal[
    "tool_error", "validation_error", "unknown_tool", "transient", "refused", "rejected"
]


TOOL_ERROR_TYPES: frozenset[str] = frozenset(
    {"tool_error", "validation_error", "unknown_tool", "transient"}
)
"""What a tool call itself can fail with; "refused" and "rejected" are the loop's own."""

LOOP_ORIGIN = "tether"
"""``meta.origin`` of results the loop wrote itself (a refused repeat, a rejected call)."""


class Envelope(TypedDict):
    status: Literal["success", "error"]
    data: NotRequired[Any]
    message: NotRequired[str]
    meta: dict[str, Any]


def success(data: Any, **meta: Any) -> Envelope:
    """A successful result; a tool may return this to attach metadata."""
    return {"status": "success", "data": data, "meta": dict(meta)}


def error(message: str, *, error_type: ErrorType = "tool_error", **meta: Any) -> Envelope:
    """A failed result whose message tells the model what went wrong and how to fix it."""
    return {
        "status": "error",
        "message": message,
        "meta": {"error_type": error_type, "transient": error_type == "transient", **meta},
    }


def is_envelope(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("status") in ("success", "error")
        and isinstance(value.get("meta"), dict)
        and ("data" in value or "message" in value)
    )
