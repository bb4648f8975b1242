"""How the order tools show rows to a model, and why an order refuses a change.

A refusal says what the order's status rules out and what would work instead, so a model
can recover without guessing.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from tether_world.money import fmt_cents
from tether_world.queries import Row, address_view, iso, payments_for


def cannot_cancel(conn: sa.Connection, order: Row) -> str:
    """Why a non-pending order cannot be cancelled, and what to do instead."""
    oid, status = order["id"], order["status"]
    if status == "paid":
        paid = [p["id"] for p in payments_for(conn, oid) if p["status"] == "succeeded"]
        payment = f" ({paid[-1]})" if paid else ""
        return (
            f"Order {oid} has been paid{payment}; a paid order is cancelled by refunding its "
            "payment with refund_payment, which also cancels the order."
        )
    if status == "shipped":
        return (
            f"Order {oid} shipped on {iso(order['shipped_at'])} (tracking "
            f"{order['tracking_no']}); a shipped order cannot be cancelled. The customer can "
            "return it once it is delivered."
        )
    if status == "delivered":
        return (
            f"Order {oid} was delivered on {iso(order['delivered_at'])}; it cannot be "
            "cancelled. The customer can start a return instead."
        )
    return f"Order {oid} is already cancelled; there is nothing to cancel."


def cannot_readdress(order: Row) -> str:
    """Why an order that is not pending or paid keeps its address."""
    oid, status = order["id"], order["status"]
    if status in ("shipped", "delivered"):
        return (
            f"Order {oid} is {status} (shipped on {iso(order['shipped_at'])}); the parcel is "
            "with the carrier, so its address can no longer be changed."
        )
    return f"Order {oid} is cancelled; a cancelled order has no shipment to re-address."


def item_view(item: Row) -> dict[str, Any]:
    """An order line with its unit price and line total as money text."""
    return {
        "sku": item["sku"],
        "product_id": item["product_id"],
        "name_zh": item["name_zh"],
        "name_en": item["name_en"],
        "attributes": item["attributes"],
        "quantity": item["quantity"],
        "unit_price": fmt_cents(item["unit_price_cents"]),
        "line_total": fmt_cents(item["unit_price_cents"] * item["quantity"]),
    }


def shipping_view(order: Row) -> dict[str, Any]:
    """Who and where an order ships to."""
    return {"recipient_name": order["recipient_name"], "phone": order["phone"]} | address_view(
        order
    )


def user_view(user: Row) -> dict[str, Any]:
    """A customer as find_user shows them."""
    return {
        "user_id": user["id"],
        "name": user["name"],
        "email": user["email"],
        "phone": user["phone"],
        "language": user["language"],
        "member_tier": user["member_tier"],
        "address": address_view(user),
    }
