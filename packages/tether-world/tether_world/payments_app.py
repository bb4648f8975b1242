"""The payment API over HTTP: a Starlette app around :class:`PaymentService`.

``POST /payments`` (header ``Idempotency-Key``; body ``{"order_id", "amount", "currency"}``)
answers 201 with the new payment, or 200 with header ``Idempotent-Replayed: true`` for a
repeated key. ``GET /payments/{id}``; ``POST /payments/{id}/refund`` (body ``{"reason"}``,
optional). Errors are ``{"error": {"code", "message"}}`` with a 4xx status. JSON numbers are
read as Decimal, never float. Bodies are untrusted (:mod:`tether_world.payments_body`): over
16 KiB is 413, nesting deeper than 8, a body not in UTF-8 or malformed JSON
is 400, an unknown field is 422.

Each endpoint consults a :class:`FaultInjector` (targets ``api.create_payment``,
``api.get_payment``, ``api.refund_payment``) before, or with ``after_effect`` after, doing its
work; database work runs in a worker thread so a stalled request never blocks the others.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tether_world.faults import Fault, FaultInjector
from tether_world.payments_body import read_json_object
from tether_world.payments_service import PaymentError, PaymentService

Handler = Callable[[Request], Awaitable[Response]]
CREATE_FIELDS = frozenset({"order_id", "amount", "currency"})
REFUND_FIELDS = frozenset({"reason"})


def create_payments_app(service: PaymentService, faults: FaultInjector | None = None) -> Starlette:
    """The ASGI app; ``faults`` may be changed while it serves."""
    injector = faults or FaultInjector()

    async def create_payment(request: Request) -> Response:
        body = await read_json_object(request, CREATE_FIELDS)
        payment, replayed = await run_in_threadpool(
            service.create,
            request.headers.get("idempotency-key"),
            body.get("order_id"),
            body.get("amount"),
            body.get("currency", "CNY"),
        )
        headers = {"Idempotent-Replayed": "true"} if replayed else {}
        return JSONResponse(payment, status_code=200 if replayed else 201, headers=headers)

    async def get_payment(request: Request) -> Response:
        payment = await run_in_threadpool(service.get, request.path_params["payment_id"])
        return JSONResponse(payment)

    async def refund_payment(request: Request) -> Response:
        body = await read_json_object(request, REFUND_FIELDS, optional=True)
        reason = body.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise PaymentError(422, "reason_invalid", "reason must be a string.")
        payment, _already = await run_in_threadpool(
            service.refund, request.path_params["payment_id"], reason
        )
        return JSONResponse(payment)

    async def health(_request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    def route(path: str, target: str, handler: Handler, method: str) -> Route:
        return Route(path, _guarded(target, handler, injector), methods=[method])

    return Starlette(
        routes=[
            route("/payments", "api.create_payment", create_payment, "POST"),
            route("/payments/{payment_id}", "api.get_payment", get_payment, "GET"),
            route("/payments/{payment_id}/refund", "api.refund_payment", refund_payment, "POST"),
            Route("/health", health, methods=["GET"]),
        ]
    )


def _guarded(target: str, handler: Handler, injector: FaultInjector) -> Handler:
    """``handler`` with its endpoint's faults and PaymentError mapped to a JSON error."""

    async def endpoint(request: Request) -> Response:
        fault = injector.next_fault(target)
        if fault is not None and not fault.after_effect:
            failed = await _strike(fault)
            if failed is not None:
                return failed
        try:
            response = await handler(request)
        except PaymentError as exc:
            response = error_response(exc.status, exc.code, exc.message)
        if fault is not None and fault.after_effect:
            return await _strike(fault) or response
        return response

    return endpoint


async def _strike(fault: Fault) -> Response | None:
    if fault.delay_s:
        await asyncio.sleep(fault.delay_s)
    if fault.status is None:
        return None
    retry_after = fault.retry_after_s
    if retry_after is None and fault.status == 429:
        retry_after = 1
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
    return error_response(
        fault.status, "injected_fault", f"Injected fault: HTTP {fault.status}.", headers
    )


def error_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(
        {"error": {"code": code, "message": message}}, status_code=status, headers=headers
    )
