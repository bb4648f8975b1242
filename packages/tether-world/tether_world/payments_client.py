"""A small sync client for the payment API that sorts failures into retry and give-up.

Transport failures (timeouts, refused connections) propagate as httpx exceptions, which tether
already treats as transient. 408/425/429 and 5xx answers raise :class:`PaymentsUnavailable`, a
:class:`TransientToolError` carrying Retry-After. Other 4xx answers raise
:class:`PaymentRejected`: the request itself is wrong and retrying it unchanged cannot help.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
from tether import TransientToolError

from tether_world.faults import TRANSIENT_STATUSES
from tether_world.money import CURRENCY, fmt

IN_PROCESS_URL = "http://payments.world"
"""Base URL used with an in-process transport (never resolved)."""


class PaymentRejected(Exception):
    """A permanent refusal (4xx other than 408/425/429)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"HTTP {status} {code}: {message}")
        self.status, self.code, self.message = status, code, message


class PaymentsUnavailable(TransientToolError):
    """The service could not answer now (429, 5xx...); the same request may succeed later."""

    def __init__(self, status: int, message: str, retry_after_s: float | None) -> None:
        super().__init__(message)
        self.status, self.retry_after_s = status, retry_after_s


class PaymentsClient:
    """Calls the payment API at ``base_url`` (or through ``transport``) with a timeout."""

    def __init__(
        self,
        base_url: str = IN_PROCESS_URL,
        *,
        transport: httpx.BaseTransport | None = None,
        timeout: float = 5.0,
    ) -> None:
        self._http = httpx.Client(base_url=base_url, transport=transport, timeout=timeout)

    def create_payment(
        self, order_id: str, amount: Decimal, idempotency_key: str
    ) -> tuple[dict[str, Any], bool]:
        """(payment, replayed): replayed is True when the key had already been used."""
        response = self._send(
            "POST",
            "/payments",
            json={"order_id": order_id, "amount": fmt(amount), "currency": CURRENCY},
            headers={"Idempotency-Key": idempotency_key},
        )
        return response.json(), response.headers.get("Idempotent-Replayed") == "true"

    def get_payment(self, payment_id: str) -> dict[str, Any]:
        return self._send("GET", f"/payments/{payment_id}").json()

    def refund_payment(self, payment_id: str, reason: str | None = None) -> dict[str, Any]:
        return self._send("POST", f"/payments/{payment_id}/refund", json={"reason": reason}).json()

    def close(self) -> None:
        self._http.close()

    def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        response = self._http.request(method, path, **kwargs)
        status = response.status_code
        if status < 400:
            return response
        code, message = _error_of(response)
        if status in TRANSIENT_STATUSES or status >= 500:
            retry_after = _retry_after(response)
            hint = f"; retry after {retry_after:g}s" if retry_after is not None else ""
            raise PaymentsUnavailable(
                status, f"payment API unavailable (HTTP {status}: {message}){hint}", retry_after
            )
        raise PaymentRejected(status, code, message)


def _error_of(response: httpx.Response) -> tuple[str, str]:
    try:
        error = response.json()["error"]
        return str(error["code"]), str(error["message"])
    except (ValueError, KeyError, TypeError):
        return "http_error", response.reason_phrase or f"HTTP {response.status_code}"


def _retry_after(response: httpx.Response) -> float | None:
    try:
        return float(response.headers["Retry-After"])
    except (KeyError, ValueError):
        return None
