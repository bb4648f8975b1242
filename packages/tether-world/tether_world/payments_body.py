"""Read a payment API request body as untrusted input: bounded in size, depth and fields.

A body is read in chunks and refused (413) once it passes :data:`MAX_BODY_BYTES`, so a huge
upload is never held whole; a ``Content-Length`` above the limit is refused before reading.
Its nesting is measured in one linear pass before decoding (the decoder recurses), and
fields outside the endpoint's schema are refused rather than ignored. Every refusal is a
:class:`PaymentError`, answered as a 4xx JSON error.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from starlette.requests import Request

from tether_world.payments_service import PaymentError

MAX_BODY_BYTES = 16 * 1024
"""Far above any valid payment request (a few hundred bytes)."""
MAX_DEPTH = 8
"""Payment bodies are flat objects; anything nested deeper is refused before decoding."""


async def read_json_object(
    request: Request, allowed: Iterable[str], *, optional: bool = False
) -> dict[str, Any]:
    """The body as a JSON object whose keys are all in ``allowed`` (numbers as Decimal)."""
    raw = await _read_bounded(request)
    if not raw.strip() and optional:
        return {}
    try:  # JSON over HTTP is UTF-8 (RFC 8259); the depth scan reads UTF-8 bytes only
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise PaymentError(400, "body_invalid", "The request body must be UTF-8 JSON.") from None
    if nesting_depth(raw) > MAX_DEPTH:
        raise PaymentError(
            400, "body_too_deep", f"The request body nests deeper than {MAX_DEPTH} levels."
        )
    try:
        body = json.loads(text, parse_float=Decimal)
    except (ValueError, RecursionError):
        raise PaymentError(400, "body_invalid", "The request body must be UTF-8 JSON.") from None
    if not isinstance(body, dict):
        raise PaymentError(400, "body_invalid", "The request body must be a JSON object.")
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        names = ", ".join(repr(name[:40]) for name in unknown[:5])
        raise PaymentError(
            422,
            "field_unknown",
            f"Unknown field(s) {names}; allowed: {', '.join(sorted(allowed))}.",
        )
    return body


async def _read_bounded(request: Request) -> bytes:
    too_large = PaymentError(
        413, "body_too_large", f"The request body is larger than {MAX_BODY_BYTES} bytes."
    )
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise too_large
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


def nesting_depth(raw: bytes) -> int:
    """The deepest ``{``/``[`` nesting outside JSON strings, in one pass over UTF-8 bytes (in
    which no byte of a multi-byte character is ASCII; in UTF-16 one is, so it is refused
    before this runs)."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x7B, 0x5B):  # { [
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x7D, 0x5D):  # } ]
            depth -= 1
    return deepest
