"""Reads shared by the order tools and the payment service, so both see orders the same way.

All statements are SQLAlchemy expressions with bound parameters: whatever a customer or a
model typed is data, never SQL.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import sqlalchemy as sa

from tether_world import db
from tether_world.money import fmt_cents, from_cents
from tether_world.pricing import Quote, quote

Row = dict[str, Any]


def utcnow() -> datetime:
    """Naive UTC wall-clock time, as every DateTime column stores it."""
    return datetime.now(UTC).replace(tzinfo=None)


def iso(value: datetime | None) -> str | None:
    return value.isoformat(timespec="seconds") if value is not None else None


def get_order(conn: sa.Connection, order_id: str) -> Row | None:
    """The order row joined with its customer's member tier, or None."""
    query = (
        sa.select(db.orders, db.users.c.member_tier)
        .join(db.users, db.users.c.id == db.orders.c.user_id)
        .where(db.orders.c.id == order_id)
    )
    row = conn.execute(query).mappings().first()
    return dict(row) if row is not None else None


def order_quote(order: Row) -> Quote:
    """The order's price under the current rules; ``payable`` is what a payment must equal."""
    return quote(
        from_cents(order["subtotal_cents"]),
        order["member_tier"],
        order["coupon_code"],
        from_cents(order["shipping_fee_cents"]),
    )


def order_items(conn: sa.Connection, order_id: str) -> list[Row]:
    """The order's lines with product names and weights."""
    query = (
        sa.select(
            db.order_items.c.sku,
            db.order_items.c.quantity,
            db.order_items.c.unit_price_cents,
            db.variants.c.attributes,
            db.variants.c.weight_g,
            db.products.c.id.label("product_id"),
            db.products.c.name_zh,
            db.products.c.name_en,
        )
        .join(db.variants, db.variants.c.sku == db.order_items.c.sku)
        .join(db.products, db.products.c.id == db.variants.c.product_id)
        .where(db.order_items.c.order_id == order_id)
        .order_by(db.order_items.c.id)
    )
    return [dict(row) for row in conn.execute(query).mappings()]


def order_weight_kg(items: list[Row]) -> Decimal:
    return Decimal(sum(item["quantity"] * item["weight_g"] for item in items)) / 1000


def payments_for(conn: sa.Connection, order_id: str) -> list[Row]:
    query = (
        sa.select(db.payments)
        .where(db.payments.c.order_id == order_id)
        .order_by(db.payments.c.created_at, db.payments.c.id)
    )
    return [dict(row) for row in conn.execute(query).mappings()]


def payment_view(row: Row) -> Row:
    """A payment as the API and the tools show it."""
    return {
        "id": row["id"],
        "order_id": row["order_id"],
        "amount": fmt_cents(row["amount_cents"]),
        "currency": row["currency"],
        "status": row["status"],
        "idempotency_key": row["idempotency_key"],
        "created_at": iso(row["created_at"]),
        "refunded_at": iso(row["refunded_at"]),
        "refund_reason": row["refund_reason"],
    }


def address_view(row: Row) -> Row:
    """The address part of a user or an order row."""
    return {key: row[key] for key in ("country", "province", "city", "address_line", "postcode")}
