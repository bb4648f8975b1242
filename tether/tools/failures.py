"""Which tool exceptions are worth retrying in place."""

from __future__ import annotations

import httpx

from tether.errors import TransientToolError

_RETRYABLE_STATUS = frozenset({408, 425, 429})


def is_transient(exc: BaseException) -> bool:
    """Timeouts, dropped connections, HTTP 429 and 5xx: the same call may succeed later."""
    if isinstance(exc, TransientToolError | TimeoutError | ConnectionError):
        return True
    if isinstance(exc, httpx.TimeoutException | httpx.NetworkError | httpx.RemoteProtocolError):
        return True
    if isinstance(exc, httpx.HTTPStatusError):
        code = exc.response.status_code
        return code in _RETRYABLE_STATUS or code >= 500
    return False


def describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
