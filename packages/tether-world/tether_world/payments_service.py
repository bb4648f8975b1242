"""The payment provider's rules, apart from HTTP: charge once per idempotency key, refund.

A payment must equal the order's *payable amount*: ``subtotal - discount + shipping_fee`` as
:func:`tether_world.pricing.quote` computes it from the order's subtotal, its customer's member
tier, the coupon stored on the order and its shipping fee (exactly what ``compute_discount``
returns for those inputs). Only a pending order can be paid; paying it marks it paid.

Idempotency: the key is stored with a unique constraint, in the same transaction that records
the charge and marks the order paid. A repeated key with the same request returns the original
payment (``replayed``); with a different request it is refused. Two concurrent requests with one
key serialise on the write lock (SQLite) or collide on the constraint or on the order's status
(other databases); the loser looks the key up again and returns the winner's payment, so one
key can never charge twice. A second key for an already paid order is refused by the
conditional ``pending -> paid`` update.
"""

from __future__ import annotations

import hashlib
import re
from decimal import Decimal
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from tether_world import db
from tether_world.fields import ORDER_ID_RE
from tether_world.money import CURRENCY, MAX_AMOUNT, fmt, from_cents, to_cents, to_decimal
from tether_world.queries import (
    Row,
    get_order,
    order_quote,
    payment_view,
    payments_for,
    utcnow,
)

IDEMPOTENCY_KEY_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{7,127}$")
IDEMPOTENCY_KEY_RULE = (
    "8-128 characters: letters, digits and . _ : -, starting with a letter or digit"
)


def payment_id(key: str) -> str:
    """Payment ids derive from the idempotency key, so one key can only ever mean one id."""
    return "PAY-" + hashlib.sha256(key.encode()).hexdigest()[:16].upper()


def request_hash(order_id: str, amount: Decimal, currency: str = CURRENCY) -> str:
    """What a key is bound to: reusing the key for another request is refused."""
    return hashlib.sha256(f"{order_id}|{fmt(amount)}|{currency}".encode()).hexdigest()


class PaymentError(Exception):
    """A request the provider refuses; ``status`` is the HTTP status it maps to."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def check_idempotency_key(key: str | None) -> str:
    if not key:
        raise PaymentError(
            400,
            "idempotency_key_missing",
            f"The Idempotency-Key header is required ({IDEMPOTENCY_KEY_RULE}); reuse the same "
            "key when retrying the same payment.",
        )
    if not IDEMPOTENCY_KEY_RE.fullmatch(key):
        raise PaymentError(
            400,
            "idempotency_key_invalid",
            f"Idempotency-Key {key[:140]!r} is malformed; it must be {IDEMPOTENCY_KEY_RULE}.",
        )
    return key


def parse_amount(value: Any) -> Decimal:
    """A chargeable amount: a finite number > 0 with at most 2 decimal places."""
    try:
        if isinstance(value, bool) or not isinstance(value, int | float | str | Decimal):
            raise ValueError
        amount = to_decimal(value)
    except (TypeError, ValueError):
        raise PaymentError(
            422, "amount_invalid", f"amount {value!r} is not a number; send e.g. '199.00'."
        ) from None
    if amount <= 0 or amount > MAX_AMOUNT:
        raise PaymentError(
            422, "amount_invalid", f"amount must be more than 0 and at most {MAX_AMOUNT}."
        )
    if amount != amount.quantize(Decimal("0.01")):
        raise PaymentError(422, "amount_invalid", f"amount {value} has more than 2 decimal places.")
    return amount


class PaymentService:
    """Payments against the world's orders, in the world's database."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def create(
        self, key: str | None, order_id: Any, amount: Any, currency: Any = CURRENCY
    ) -> tuple[Row, bool]:
        """Charge ``amount`` for ``order_id`` once per ``key``: (payment, replayed)."""
        key = check_idempotency_key(key)
        if not isinstance(order_id, str) or not ORDER_ID_RE.fullmatch(order_id):
            raise PaymentError(
                422, "order_id_invalid", f"order_id {order_id!r} must look like ORD-2024-001."
            )
        value = parse_amount(amount)
        if currency != CURRENCY:
            raise PaymentError(
                422, "currency_unsupported", f"Payments are in {CURRENCY} only, not {currency!r}."
            )
        bound_to = request_hash(order_id, value, currency)
        try:
            with self._engine.begin() as conn:
                existing = _by_key(conn, key)
                if existing is None:
                    return self._charge(conn, key, bound_to, order_id, value), False
        except (IntegrityError, PaymentError):
            # A concurrent request with this key may have won the race (the insert collided,
            # or the order was already paid when we read it): then answer with its payment.
            with self._engine.connect() as conn:
                existing = _by_key(conn, key)
            if existing is None:
                raise
        return _replay(existing, bound_to), True

    def _charge(
        self, conn: sa.Connection, key: str, bound_to: str, order_id: str, amount: Decimal
    ) -> Row:
        order = get_order(conn, order_id)
        if order is None:
            raise PaymentError(404, "order_not_found", f"Order {order_id} does not exist.")
        if order["status"] != "pending":
            raise PaymentError(409, "order_not_payable", _not_payable(conn, order))
        payable = order_quote(order).payable
        if amount != payable:
            raise PaymentError(
                422,
                "amount_mismatch",
                f"amount {fmt(amount)} does not match the payable amount of {order_id}, "
                f"{fmt(payable)} CNY (subtotal - discount + shipping fee; compute_discount "
                "with the order's subtotal, member tier, coupon and shipping fee gives it).",
            )
        now = utcnow()
        row = {
            "id": payment_id(key),
            "idempotency_key": key,
            "request_hash": bound_to,
            "order_id": order_id,
            "amount_cents": to_cents(amount),
            "currency": CURRENCY,
            "status": "succeeded",
            "created_at": now,
            "refunded_at": None,
            "refund_reason": None,
        }
        conn.execute(db.payments.insert(), row)
        marked = conn.execute(
            db.orders.update()
            .where(db.orders.c.id == order_id, db.orders.c.status == "pending")
            .values(status="paid", updated_at=now)
        )
        if marked.rowcount != 1:  # another key paid it since we read it: undo ours
            raise PaymentError(409, "order_not_payable", f"Order {order_id} was paid meanwhile.")
        return payment_view(row)

    def get(self, pay_id: str) -> Row:
        with self._engine.connect() as conn:
            row = _by_id(conn, pay_id)
        return payment_view(row)

    def refund(self, pay_id: str, reason: str | None = None) -> tuple[Row, bool]:
        """Refund a payment in full and cancel its order: (payment, already_refunded).

        Refunding twice is harmless: the second call returns the refunded payment.
        """
        with self._engine.begin() as conn:
            payment = _by_id(conn, pay_id)
            if payment["status"] == "refunded":
                return payment_view(payment), True
            order = get_order(conn, payment["order_id"])
            assert order is not None  # payments reference orders
            if order["status"] in ("shipped", "delivered"):
                raise PaymentError(
                    409,
                    "order_shipped",
                    f"Order {order['id']} is {order['status']}; a shipped order is refunded "
                    "through a return once the goods are back, not here.",
                )
            now = utcnow()
            reason = (reason or "refund requested")[:200]
            conn.execute(
                db.payments.update()
                .where(db.payments.c.id == pay_id)
                .values(status="refunded", refunded_at=now, refund_reason=reason)
            )
            conn.execute(
                db.orders.update()
                .where(db.orders.c.id == order["id"], db.orders.c.status == "paid")
                .values(status="cancelled", cancelled_at=now, cancel_reason=reason, updated_at=now)
            )
            payment = _by_id(conn, pay_id)
        return payment_view(payment), False

    def ledger(self) -> list[Row]:
        """Every payment, oldest first."""
        query = sa.select(db.payments).order_by(db.payments.c.created_at, db.payments.c.id)
        with self._engine.connect() as conn:
            return [payment_view(dict(row)) for row in conn.execute(query).mappings()]


def _by_key(conn: sa.Connection, key: str) -> Row | None:
    query = sa.select(db.payments).where(db.payments.c.idempotency_key == key)
    row = conn.execute(query).mappings().first()
    return dict(row) if row is not None else None


def _by_id(conn: sa.Connection, pay_id: str) -> Row:
    row = conn.execute(sa.select(db.payments).where(db.payments.c.id == pay_id)).mappings().first()
    if row is None:
        raise PaymentError(
            404, "payment_not_found", f"Payment {pay_id!r} does not exist; check the id."
        )
    return dict(row)


def _replay(existing: Row, bound_to: str) -> Row:
    if existing["request_hash"] != bound_to:
        raise PaymentError(
            422,
            "idempotency_key_reused",
            f"This Idempotency-Key was already used for a different request (payment "
            f"{existing['id']}: {existing['order_id']}, {fmt(from_cents(existing['amount_cents']))}"
            " CNY). Use a new key for a different payment.",
        )
    return payment_view(existing)


def _not_payable(conn: sa.Connection, order: Row) -> str:
    status = order["status"]
    if status == "cancelled":
        return f"Order {order['id']} is cancelled and cannot be paid."
    paid = [p for p in payments_for(conn, order["id"]) if p["status"] == "succeeded"]
    by = f" by payment {paid[-1]['id']}" if paid else ""
    return f"Order {order['id']} is already {status}{by}; it must not be paid again."
