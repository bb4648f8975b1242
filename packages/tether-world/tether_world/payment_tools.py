"""``pay_order`` and ``refund_payment``: the world's side-effecting tools, safe to retry.

``pay_order`` sends an idempotency key derived from the tether run and the order
(:func:`idempotency_key`), so every retry and every resumed attempt of one run sends the same
key, and the payment API charges at most once per run and order. Without a run id (the tool
called outside a tether run) the key is derived from the order alone: one payment request per
order, whoever sends it, which is just as safe since an order is only ever paid once.
"""

from __future__ import annotations

import hashlib
from decimal import Decimal

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from pydantic import BaseModel
from tether.tools import ErrorType, ToolOutput, error, run_id_from, success

from tether_world.faults import FaultInjector
from tether_world.fields import STRICT, OrderId, PaymentId, Reason
from tether_world.money import PositiveAmount
from tether_world.payments_client import PaymentRejected, PaymentsClient
from tether_world.toolkit import make_tool

TOOL_NAMES = ("pay_order", "refund_payment")


def idempotency_key(run_id: str | None, order_id: str) -> str:
    """``run-<40 hex>`` from sha256(run id, order id); ``order-<order id>`` without a run."""
    if run_id is None:
        return f"order-{order_id}"
    digest = hashlib.sha256(f"{run_id}\x1f{order_id}".encode()).hexdigest()
    return f"run-{digest[:40]}"


class PayOrderArgs(BaseModel):
    model_config = STRICT
    order_id: OrderId
    amount: PositiveAmount


class RefundArgs(BaseModel):
    model_config = STRICT
    payment_id: PaymentId
    reason: Reason = "customer request"


class PaymentTools:
    """Tools that call the payment API through one client."""

    def __init__(self, client: PaymentsClient) -> None:
        self._client = client

    def tools(self, faults: FaultInjector | None = None) -> list[BaseTool]:
        return [
            make_tool(self.pay_order, PayOrderArgs, faults=faults, side_effects=True),
            make_tool(self.refund_payment, RefundArgs, faults=faults, side_effects=True),
        ]

    def pay_order(self, order_id: str, amount: Decimal, config: RunnableConfig) -> ToolOutput:
        """Pay a pending order through the payment API. amount must equal the order's payable
        amount in CNY (compute_discount with the order's subtotal, member_tier, coupon_code and
        shipping_fee). Safe to retry: a retry within the same run never charges twice.
        支付待付款订单，金额须等于应付金额。"""
        key = idempotency_key(run_id_from(config), order_id)
        try:
            payment, replayed = self._client.create_payment(order_id, amount, key)
        except PaymentRejected as exc:
            return _rejection(exc)
        return success(payment, idempotency_key=key, replayed=replayed)

    def refund_payment(self, payment_id: str, reason: str = "customer request") -> ToolOutput:
        """Refund a payment in full and cancel its order; only before the order has shipped.
        Refunding an already refunded payment changes nothing. 全额退款并取消订单（未发货前）。"""
        try:
            payment = self._client.refund_payment(payment_id, reason)
        except PaymentRejected as exc:
            return _rejection(exc)
        return success(payment)


def _rejection(exc: PaymentRejected) -> ToolOutput:
    kind: ErrorType = "refused" if exc.status == 409 else "tool_error"
    return error(
        f"The payment API refused the request ({exc.code}): {exc.message}",
        error_type=kind,
        http_status=exc.status,
        code=exc.code,
    )
