"""What a tool returns when it has more to say than its data: :class:`ToolOutput`.

A tool's return value is data. To attach metadata (a ``confidence_score`` the
``low_confidence`` rule reads, an idempotency key) or to report a failure it handled itself,
a tool returns a ``ToolOutput``, usually through :func:`success` or :func:`error`. It is a
Python object, so no JSON a tool passes through (an HTTP body, a model's text) can ever
forge one. The registry validates it: a confidence outside [0, 1] is dropped, meta keys tether
reserves (``rule``, ``origin``, ``error_type``, ...) are dropped, the rest is made JSON-safe.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from tether.tools.envelope import ErrorType

TOOL_SETTABLE_ERRORS: frozenset[str] = frozenset(
    {"tool_error", "validation_error", "transient", "refused"}
)
"""Error types a tool may report; anything else is recorded as ``tool_error``."""


@dataclass(frozen=True)
class ToolOutput:
    """A tool's result with metadata. ``status="error"`` reports a handled failure whose
    ``message`` tells the model what to do; ``error_type="transient"`` asks for a retry."""

    data: Any = None
    status: Literal["success", "error"] = "success"
    message: str = ""
    error_type: ErrorType = "tool_error"
    confidence_score: float | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)


def success(data: Any, *, confidence_score: float | None = None, **meta: Any) -> ToolOutput:
    """Data with metadata, for a tool to return (``confidence_score`` in [0, 1])."""
    return ToolOutput(data=data, confidence_score=confidence_score, meta=meta)


def error(message: str, *, error_type: ErrorType = "tool_error", **meta: Any) -> ToolOutput:
    """A failure the tool handled, for a tool to return; the message is shown to the model."""
    return ToolOutput(status="error", message=message, error_type=error_type, meta=meta)
