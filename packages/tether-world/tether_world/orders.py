"""Tools over the orders database: look up orders, users and products; cancel; re-address.

What an order allows depends on its status:

=============  =======  ===================  ==============================================
status         cancel   change address       pay
=============  =======  ===================  ==============================================
pending        yes      yes (fee recomputed) yes
paid           refund   yes, same fee only   no (already paid)
shipped        no       no                   no
delivered      no       no                   no
cancelled      no       no                   no
=============  =======  ===================  ==============================================

Refusals are ``refused`` envelopes that say why and what would work instead.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import sqlalchemy as sa
from langchain_core.tools import BaseTool
from pydantic import BaseModel
from sqlalchemy.engine import Engine

from tether_world import db
from tether_world.faults import FaultInjector
from tether_world.money import fmt_cents, from_cents, to_cents
from tether_world.order_args import (
    CancelOrderArgs,
    FindUserArgs,
    ListUserOrdersArgs,
    OrderArgs,
    ProductArgs,
    UpdateAddressArgs,
)
from tether_world.order_views import (
    cannot_cancel,
    cannot_readdress,
    item_view,
    shipping_view,
    user_view,
)
from tether_world.pricing import shipping_fee, shipping_zone
from tether_world.queries import (
    Row,
    get_order,
    iso,
    order_items,
    order_weight_kg,
    payments_for,
    utcnow,
)
from tether_world.toolkit import ToolProblem, make_tool, refused

ALLOWED_ACTIONS: dict[str, list[str]] = {
    "pending": ["pay_order", "cancel_order", "update_shipping_address"],
    "paid": ["refund_payment", "update_shipping_address"],
    "shipped": [],
    "delivered": [],
    "cancelled": [],
}


# --- tools ------------------------------------------------------------------------------------
class OrderTools:
    """The order, user and product tools of one world database."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def tools(self, faults: FaultInjector | None = None) -> list[BaseTool]:
        pairs: list[tuple[Callable[..., Any], type[BaseModel]]] = [
            (self.query_order, OrderArgs),
            (self.find_user, FindUserArgs),
            (self.list_user_orders, ListUserOrdersArgs),
            (self.get_product, ProductArgs),
        ]
        writes: list[tuple[Callable[..., Any], type[BaseModel]]] = [
            (self.cancel_order, CancelOrderArgs),
            (self.update_shipping_address, UpdateAddressArgs),
        ]
        return [make_tool(fn, schema, faults=faults) for fn, schema in pairs] + [
            make_tool(fn, schema, faults=faults, side_effects=True) for fn, schema in writes
        ]

    def query_order(self, order_id: str) -> dict[str, Any]:
        """Look up an order: status, items, subtotal, coupon, member tier, shipping fee, address,
        payments and the actions its status allows. The amount to pay is what compute_discount
        returns for the order's subtotal, member_tier, coupon_code and shipping_fee.
        查询订单的状态与详情。"""
        with self._engine.connect() as conn:
            order = _require_order(conn, order_id)
            items = order_items(conn, order_id)
            payments = payments_for(conn, order_id)
        return {
            "order_id": order["id"],
            "status": order["status"],
            "created_at": iso(order["created_at"]),
            "user_id": order["user_id"],
            "member_tier": order["member_tier"],
            "items": [item_view(item) for item in items],
            "currency": order["currency"],
            "subtotal": fmt_cents(order["subtotal_cents"]),
            "coupon_code": order["coupon_code"],
            "shipping_fee": fmt_cents(order["shipping_fee_cents"]),
            "total_weight_kg": str(order_weight_kg(items)),
            "shipping_address": shipping_view(order),
            "tracking_no": order["tracking_no"],
            "shipped_at": iso(order["shipped_at"]),
            "delivered_at": iso(order["delivered_at"]),
            "payments": [
                {
                    "payment_id": p["id"],
                    "amount": fmt_cents(p["amount_cents"]),
                    "status": p["status"],
                }
                for p in payments
            ],
            "allowed_actions": ALLOWED_ACTIONS[order["status"]],
        }

    def find_user(
        self, email: str | None = None, name: str | None = None, postcode: str | None = None
    ) -> dict[str, Any]:
        """Find a customer by email, or by full name and postcode; returns their user id, member
        tier and address. 按邮箱，或按姓名加邮编查找客户。"""
        if email:
            where = sa.func.lower(db.users.c.email) == email.strip().lower()
            missing = (
                f"No customer has the email {email!r}. Check the spelling, or search by name "
                "and postcode."
            )
        elif name and postcode:
            where = sa.and_(
                sa.func.lower(db.users.c.name) == name.strip().lower(),
                db.users.c.postcode == postcode.strip(),
            )
            missing = (
                f"No customer named {name!r} has postcode {postcode!r}. Check both (the name "
                "must be the full registered name), or search by email."
            )
        else:
            raise ToolProblem("Give the customer's email, or both their full name and postcode.")
        with self._engine.connect() as conn:
            rows = conn.execute(sa.select(db.users).where(where).order_by(db.users.c.id))
            users = [user_view(dict(row)) for row in rows.mappings()]
        if not users:
            raise ToolProblem(missing)
        return {"count": len(users), "users": users}

    def list_user_orders(
        self, user_id: str, status: str | None = None, limit: int = 20
    ) -> dict[str, Any]:
        """List a customer's orders, newest first, optionally only those with one status.
        列出客户的订单（最新在前）。"""
        conditions = [db.orders.c.user_id == user_id]
        if status:
            conditions.append(db.orders.c.status == status)
        with self._engine.connect() as conn:
            if (
                conn.execute(sa.select(db.users.c.id).where(db.users.c.id == user_id)).first()
                is None
            ):
                raise ToolProblem(
                    f"No customer has the user id {user_id}. User ids look like U0001; get the "
                    "id from find_user."
                )
            total = conn.scalar(
                sa.select(sa.func.count()).select_from(db.orders).where(*conditions)
            )
            rows = conn.execute(
                sa.select(db.orders)
                .where(*conditions)
                .order_by(db.orders.c.created_at.desc(), db.orders.c.id.desc())
                .limit(limit)
            ).mappings()
            orders = [
                {
                    "order_id": row["id"],
                    "status": row["status"],
                    "created_at": iso(row["created_at"]),
                    "subtotal": fmt_cents(row["subtotal_cents"]),
                }
                for row in rows
            ]
        return {"user_id": user_id, "total": total, "returned": len(orders), "orders": orders}

    def get_product(self, product_id: str) -> dict[str, Any]:
        """Look up a product (P001) or one of its variants (SKU P001-02): names, price, weight
        and stock of each variant. 查询商品及各规格的价格和库存。"""
        pid, _, _ = product_id.partition("-")
        with self._engine.connect() as conn:
            product = (
                conn.execute(sa.select(db.products).where(db.products.c.id == pid))
                .mappings()
                .first()
            )
            if product is None:
                count = conn.scalar(sa.select(sa.func.count()).select_from(db.products))
                raise ToolProblem(
                    f"No product {pid} exists. Product ids run from P001 to P{count:03d}; "
                    "take the id or SKU from query_order's items."
                )
            variants = (
                conn.execute(
                    sa.select(db.variants)
                    .where(db.variants.c.product_id == pid)
                    .order_by(db.variants.c.sku)
                )
                .mappings()
                .all()
            )
        if product_id != pid and product_id not in {v["sku"] for v in variants}:
            raise ToolProblem(
                f"Product {pid} has no variant {product_id}; its SKUs are "
                f"{', '.join(v['sku'] for v in variants)}."
            )
        return {
            "product_id": product["id"],
            "name_zh": product["name_zh"],
            "name_en": product["name_en"],
            "category": product["category"],
            "requested_sku": product_id if product_id != pid else None,
            "variants": [
                {
                    "sku": v["sku"],
                    "attributes": v["attributes"],
                    "price": fmt_cents(v["price_cents"]),
                    "weight_kg": str(Decimal(v["weight_g"]) / 1000),
                    "stock": v["stock"],
                }
                for v in variants
            ],
        }

    def cancel_order(self, order_id: str, reason: str = "customer request") -> dict[str, Any]:
        """Cancel a pending (unpaid) order and put its items back in stock. Paid orders are
        cancelled by refunding their payment (refund_payment); shipped orders cannot be
        cancelled. 取消未付款订单。"""
        with self._engine.begin() as conn:
            order = _require_order(conn, order_id)
            if order["status"] != "pending":
                raise refused(cannot_cancel(conn, order), status=order["status"])
            now = utcnow()
            conn.execute(
                db.orders.update()
                .where(db.orders.c.id == order_id, db.orders.c.status == "pending")
                .values(status="cancelled", cancelled_at=now, cancel_reason=reason, updated_at=now)
            )
            items = order_items(conn, order_id)
            for item in items:
                conn.execute(
                    db.variants.update()
                    .where(db.variants.c.sku == item["sku"])
                    .values(stock=db.variants.c.stock + item["quantity"])
                )
        return {
            "order_id": order_id,
            "status": "cancelled",
            "restocked": [{"sku": i["sku"], "quantity": i["quantity"]} for i in items],
        }

    def update_shipping_address(
        self,
        order_id: str,
        address_line: str,
        city: str,
        province: str,
        postcode: str,
        country: str = "CN",
        recipient_name: str | None = None,
        phone: str | None = None,
    ) -> dict[str, Any]:
        """Change where an order ships, before it has shipped. For a pending order the shipping
        fee is recomputed for the new address; a paid order may only move to an address with
        the same fee. 修改未发货订单的收货地址。"""
        country = country.upper()
        _check_postcode(country, postcode)
        address = {
            "country": country,
            "province": province,
            "city": city,
            "address_line": address_line,
            "postcode": postcode,
        }
        contact = {"recipient_name": recipient_name, "phone": phone}
        with self._engine.begin() as conn:
            order = _require_order(conn, order_id)
            status = order["status"]
            if status not in ("pending", "paid"):
                raise refused(cannot_readdress(order), status=status)
            fee = _new_shipping_fee(conn, order, country, province)
            changes = {"shipping_fee_cents": to_cents(fee), "updated_at": utcnow()}
            given = {key: value for key, value in contact.items() if value}  # omitted: kept
            _update_unless_changed(conn, order, address | changes | given)
            updated = _require_order(conn, order_id)
        return {
            "order_id": order_id,
            "status": status,
            "shipping_address": shipping_view(updated),
            "shipping_fee": fmt_cents(updated["shipping_fee_cents"]),
            "previous_shipping_fee": fmt_cents(order["shipping_fee_cents"]),
        }


# --- helpers ----------------------------------------------------------------------------------
def _require_order(conn: sa.Connection, order_id: str) -> Row:
    order = get_order(conn, order_id)
    if order is None:
        raise ToolProblem(
            f"Order {order_id} does not exist. Order ids look like ORD-2024-001 (ORD-, year, "
            "sequence number); check the id with the customer, or find the customer with "
            "find_user and their orders with list_user_orders."
        )
    return order


def _check_postcode(country: str, postcode: str) -> None:
    """Chinese postcodes are checked before the database is touched: a typo is the model's to
    fix with the customer, not a refusal."""
    if country == "CN" and not (postcode.isdigit() and len(postcode) == 6):
        raise ToolProblem(
            f"Chinese postcodes have exactly 6 digits, e.g. 200031; got {postcode!r}. Ask "
            "the customer for the correct postcode."
        )


def _new_shipping_fee(conn: sa.Connection, order: Row, country: str, province: str) -> Decimal:
    """The order's fee to the new address; a paid order's fee cannot change, so a different
    fee is refused with what would work instead."""
    order_id, status = order["id"], order["status"]
    new_fee = shipping_fee(
        order_weight_kg(order_items(conn, order_id)),
        shipping_zone(country, province),
        from_cents(order["subtotal_cents"]),
    ).fee
    old_fee = from_cents(order["shipping_fee_cents"])
    if status == "paid" and new_fee != old_fee:
        raise refused(
            f"Order {order_id} is already paid with a shipping fee of {old_fee} CNY; the "
            f"new address would cost {new_fee} CNY to ship, and the fee of a paid order "
            "cannot change. Only an address with the same fee is possible, or refund the "
            "order and place it again.",
            status=status,
        )
    return new_fee


def _update_unless_changed(conn: sa.Connection, order: Row, values: dict[str, Any]) -> None:
    """Write ``values`` only while the order keeps the status it was checked in, so a change
    made meanwhile (paid, shipped) is reported instead of overwritten."""
    changed = conn.execute(
        db.orders.update()
        .where(db.orders.c.id == order["id"], db.orders.c.status == order["status"])
        .values(**values)
    )
    if changed.rowcount != 1:
        raise ToolProblem(f"Order {order['id']} changed meanwhile; query it and try again.")
