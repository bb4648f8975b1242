"""The one shape every tool result takes in state, success or failure.

``{"status": "success", "data": ..., "meta": {...}}`` or
``{"status": "error", "message": "...", "meta": {...}}``. ``meta`` carries what the loop
reads (``error_type``, ``transient``, ``latency_s``, ``retry_count``, ``confidence_score``,
``rule``...). Only tether's own code builds envelopes: a tool returns plain data or a
:class:`~tether.tools.output.ToolOutput`, and the registry turns either into an envelope
(a tool returning a dict shaped like an envelope has returned data, nothing more).
"""

from __future__ import annotations

from typing import Any, Literal

from tether.state import ToolResult
from tether.vocabulary import TOOL_ERROR_TYPES

ErrorType = Literal[
    "tool_error", "validation_error", "unknown_tool", "transient", "refused", "rejected"
]

__all__ = ["LOOP_ORIGIN", "RESERVED_META", "TOOL_ERROR_TYPES", "Envelope", "ErrorType"]

LOOP_ORIGIN = "tether"
"""``meta.origin`` of results the loop wrote itself (a refused repeat, a rejected call)."""

RESERVED_META: frozenset[str] = frozenset(
    {
        "error_type",
        "transient",
        "origin",
        "rule",
        "latency_s",
        "retry_count",
        "confidence_score",
        "truncated",
    }
)
"""Meta keys only tether writes; a tool's own meta never sets them (a tool's ``rule`` or
``origin`` is dropped, its confidence comes through the typed ``ToolOutput`` field)."""


Envelope = ToolResult
"""The envelope's type is the state's :class:`~tether.state.ToolResult`."""


def success_envelope(data: Any, **meta: Any) -> Envelope:
    """A successful result, built by tether from what a tool returned."""
    return {"status": "success", "data": data, "meta": dict(meta)}


def error_envelope(message: str, *, error_type: ErrorType = "tool_error", **meta: Any) -> Envelope:
    """A failed result whose message tells the model what went wrong and how to fix it."""
    return {
        "status": "error",
        "message": message,
        "meta": {"error_type": error_type, "transient": error_type == "transient", **meta},
    }


error = error_envelope
"""The older name, still used by the benchmark's LangChain tool adapter."""
