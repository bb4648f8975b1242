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
    """``Type: message``; an exception whose ``__str__`` itself fails is named by its type."""
    name = type(exc).__name__
    try:
        text = str(exc).strip()
    except Exception:
        return f"{name} (its message could not be read)"
    return f"{name}: {text}" if text else name
