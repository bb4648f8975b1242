"""From whatever a tool did to an envelope fit for state: checked, JSON-safe, size-capped.

These are tether's only doors from tool code into state. :func:`from_return` reads a return
value (data, or a :class:`ToolOutput`), :func:`from_exception` a raised exception, and
:func:`cap_result` bounds what the tool buffer and prompts will carry.
"""

from __future__ import annotations

import json
from typing import Any

from tether.text import cut
from tether.tools.envelope import (
    RESERVED_META,
    Envelope,
    error_envelope,
    success_envelope,
)
from tether.tools.failures import describe, is_transient
from tether.tools.output import TOOL_SETTABLE_ERRORS, ToolOutput
from tether.tools.safe import json_safe

DEFAULT_MAX_RESULT_CHARS = 8_000
"""A sensible ``max_tool_result_chars``: a few pages of text, a few thousand tokens."""
MESSAGE_CHARS = 2_000
"""Error messages longer than this are cut; the model needs the gist, not a dump."""
CAP_WHY = "over the max_tool_result_chars cap"


def from_return(value: Any) -> Envelope:
    """The envelope for a tool's return value. Plain values (envelope-shaped dicts included)
    are data; only a :class:`ToolOutput` carries status and metadata."""
    if not isinstance(value, ToolOutput):
        return success_envelope(json_safe(value))
    meta = _tool_meta(value)
    if value.status == "error":
        kind = value.error_type if value.error_type in TOOL_SETTABLE_ERRORS else "tool_error"
        return error_envelope(_message(value.message), error_type=kind, **meta)
    score = value.confidence_score
    if _is_score(score):
        meta["confidence_score"] = float(score)  # type: ignore[arg-type]
    return success_envelope(json_safe(value.data), **meta)


def from_exception(tool_name: str, exc: Exception) -> Envelope:
    """A tool's exception as an error envelope (transient when a retry may succeed)."""
    message = _message(f"{tool_name} failed: {describe(exc)}")
    return error_envelope(message, error_type="transient" if is_transient(exc) else "tool_error")


def cap_result(envelope: Envelope, max_chars: int) -> Envelope:
    """``envelope`` with its data or message cut to about ``max_chars`` characters.

    Data over the cap becomes its JSON text, cut, ending with a marker saying how much was
    cut; ``meta.truncated`` records ``{"chars", "kept"}``. Data under the cap is unchanged.
    ``envelope`` must already be JSON-safe (as every registry result is).
    """
    if envelope["status"] == "error":
        message = envelope.get("message", "")
        if len(message) <= max_chars:
            return envelope
        shown, total = cut(message, max_chars, CAP_WHY), len(message)
        return {**envelope, "message": shown, "meta": _marked(envelope, total, max_chars)}
    data = envelope.get("data")
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    if len(text) <= max_chars:
        return envelope
    meta = _marked(envelope, len(text), max_chars)
    return {**envelope, "data": cut(text, max_chars, CAP_WHY), "meta": meta}


def _marked(envelope: Envelope, total: int, kept: int) -> dict[str, Any]:
    return {**envelope["meta"], "truncated": {"chars": total, "kept": kept}}


def _tool_meta(output: ToolOutput) -> dict[str, Any]:
    """The tool's own meta, without the keys only tether may write, JSON-safe."""
    try:
        own = {str(k): v for k, v in dict(output.meta).items() if str(k) not in RESERVED_META}
    except Exception:  # a meta mapping that cannot even be read is dropped
        return {}
    safe = json_safe(own)
    return safe if isinstance(safe, dict) else {}


def _is_score(score: Any) -> bool:
    """A number in [0, 1] (NaN and infinities fail the comparison)."""
    return isinstance(score, int | float) and not isinstance(score, bool) and 0 <= score <= 1


def _message(message: Any) -> str:
    text = message if isinstance(message, str) else str(json_safe(message))
    text = str(json_safe(text))
    return cut(text, MESSAGE_CHARS, "error messages are kept short")
