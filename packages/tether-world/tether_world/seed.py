"""The seeded world: the same users, catalogue, orders and ledger for the same seed, always.

Everything is drawn from one ``random.Random(seed)`` in a fixed order, and timestamps come from
a fixed start date, so two worlds built with one seed hash identically. Prices, discounts and
shipping fees are computed by :mod:`tether_world.pricing`, so seeded orders obey the same rules
as the tools. ``ORD-2024-001`` is always a pending order of a gold member with a coupon, the
order the seed's running example pays.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from functools import cache
from typing import Any

import sqlalchemy as sa

from tether_world import db
from tether_world.money import CURRENCY, from_cents, to_cents
from tether_world.payments_service import payment_id, request_hash
from tether_world.pricing import (
    COUPONS,
    PricingError,
    check_coupon,
    quote,
    shipping_fee,
    shipping_zone,
)
from tether_world.seed_data import (
    CN_GIVEN,
    CN_PLACES,
    CN_SURNAMES,
    DEFAULT_SEED,
    EDITIONS,
    EN_FIRST,
    EN_LAST,
    EN_PLACES,
    PRODUCT_LINES,
    UK_POSTCODES,
    Place,
)

START = datetime(2024, 1, 1, 8, 0, 0)
TIERS = (("none", 50), ("silver", 25), ("gold", 17), ("platinum", 8))
STATUSES = (("pending", 15), ("paid", 15), ("shipped", 20), ("delivered", 40), ("cancelled", 10))

Row = dict[str, Any]


def order_id(number: int) -> str:
    """The id of the ``number``-th seeded order: ORD-2024-001, ..., ORD-2024-1000."""
    return f"ORD-2024-{number:03d}"


@dataclass
class SeedData:
    """Rows per table, in insertion order."""

    tables: dict[str, list[Row]] = field(default_factory=dict)

    def count(self, table: str) -> int:
        return len(self.tables.get(table, []))


@cache
def generate(seed: int = DEFAULT_SEED, n_users: int = 500, n_orders: int = 1000) -> SeedData:
    """The seeded rows (cached: callers must not mutate them)."""
    rng = random.Random(seed)
    data = SeedData()
    data.tables["users"] = [_user(rng, n) for n in range(1, n_users + 1)]
    data.tables["users"][0]["member_tier"] = "gold"
    products, variants = _catalogue(rng)
    data.tables["products"], data.tables["variants"] = products, variants
    _orders(rng, data, n_orders)
    return data


def load(conn: sa.Connection, data: SeedData) -> None:
    """Insert ``data`` into empty tables (parents first)."""
    for table in db.WORLD_TABLES:
        rows = data.tables.get(table.name)
        if rows:
            conn.execute(table.insert(), rows)


def _weighted(rng: random.Random, options: tuple[tuple[str, int], ...]) -> str:
    roll = rng.randrange(sum(weight for _, weight in options))
    for value, weight in options:
        if roll < weight:
            return value
        roll -= weight
    raise AssertionError("unreachable")


def _user(rng: random.Random, n: int) -> Row:
    chinese = rng.random() < 0.6
    if chinese:
        name = rng.choice(CN_SURNAMES) + rng.choice(CN_GIVEN)
        email = f"user{n:04d}@example.cn"
        place = rng.choice(CN_PLACES)
    else:
        first, last = rng.choice(EN_FIRST), rng.choice(EN_LAST)
        name = f"{first} {last}"
        email = f"{first}.{last}{n}@example.com".lower().replace("'", "")
        place = rng.choice(EN_PLACES)
    return {
        "id": f"U{n:04d}",
        "name": name,
        "email": email,
        "phone": _phone(rng, place),
        "language": "zh" if chinese else "en",
        "member_tier": _weighted(rng, TIERS),
        "country": place.country,
        "province": place.province,
        "city": place.city,
        "address_line": _address_line(rng, place),
        "postcode": _postcode(rng, place),
        "created_at": START - timedelta(days=rng.randrange(30, 900)),
    }


def _phone(rng: random.Random, place: Place) -> str:
    if place.country == "CN":
        return f"1{rng.choice('3589')}{rng.randrange(10**9):09d}"
    code = {"US": "+1", "GB": "+44", "SG": "+65"}[place.country]
    return f"{code} {rng.randrange(200, 999)} {rng.randrange(10**7):07d}"


def _address_line(rng: random.Random, place: Place) -> str:
    street, number = rng.choice(place.streets), rng.randrange(1, 999)
    if place.chinese:
        return f"{street}{number}号{rng.randrange(1, 30)}栋{rng.randrange(101, 2999)}室"
    return f"{number} {street}, Apt {rng.randrange(1, 40)}"


def _postcode(rng: random.Random, place: Place) -> str:
    if place.country == "GB":
        return rng.choice(UK_POSTCODES)
    if place.country == "SG":
        return f"{rng.randrange(10**6):06d}"
    if place.country == "US":
        return f"{place.postcode_prefix}{rng.randrange(100):02d}"
    return f"{place.postcode_prefix}{rng.randrange(1000):03d}"


def _catalogue(rng: random.Random) -> tuple[list[Row], list[Row]]:
    products: list[Row] = []
    variants: list[Row] = []
    for line_no, line in enumerate(PRODUCT_LINES):
        for edition_no, (zh, en, percent) in enumerate(EDITIONS):
            pid = f"P{line_no * len(EDITIONS) + edition_no + 1:03d}"
            products.append(
                {
                    "id": pid,
                    "name_zh": f"{line.name_zh}（{zh}）",
                    "name_en": f"{line.name_en} ({en})",
                    "category": line.category,
                }
            )
            price_cents = line.price * percent
            for option_no, option in enumerate(line.options, start=1):
                variants.append(
                    {
                        "sku": f"{pid}-{option_no:02d}",
                        "product_id": pid,
                        "attributes": option,
                        "price_cents": price_cents,
                        "weight_g": line.weight_g,
                        "stock": 0 if rng.random() < 0.08 else rng.randrange(1, 200),
                    }
                )
    return products, variants


def _orders(rng: random.Random, data: SeedData, n_orders: int) -> None:
    users, variants = data.tables["users"], data.tables["variants"]
    minutes = sorted(rng.randrange(365 * 24 * 60) for _ in range(n_orders))
    orders: list[Row] = []
    items: list[Row] = []
    payments: list[Row] = []
    for number, minute in enumerate(minutes, start=1):
        user = users[0] if number == 1 else rng.choice(users)
        created = START + timedelta(minutes=minute)
        status = "pending" if number == 1 else _weighted(rng, STATUSES)
        lines = _order_lines(rng, variants, order_id(number), len(items))
        items.extend(lines)
        order = _order_row(rng, number, user, status, created, lines, variants)
        if number == 1:
            order["coupon_code"] = _first_valid_coupon(order, user, ("SAVE20", "WELCOME10"))
        orders.append(order)
        if status in ("paid", "shipped", "delivered"):
            payments.append(_seed_payment(order, user))
    data.tables.update(orders=orders, order_items=items, payments=payments)


def _order_lines(rng: random.Random, variants: list[Row], oid: str, first_id: int) -> list[Row]:
    chosen: dict[str, Row] = {}
    for _ in range(rng.randrange(1, 5)):
        variant = rng.choice(variants)
        chosen.setdefault(variant["sku"], variant)
    return [
        {
            "id": first_id + i,
            "order_id": oid,
            "sku": variant["sku"],
            "quantity": rng.randrange(1, 4),
            "unit_price_cents": variant["price_cents"],
        }
        for i, variant in enumerate(chosen.values(), start=1)
    ]


def _order_row(
    rng: random.Random,
    number: int,
    user: Row,
    status: str,
    created: datetime,
    lines: list[Row],
    variants: list[Row],
) -> Row:
    weights = {v["sku"]: v["weight_g"] for v in variants}
    subtotal = from_cents(sum(li["quantity"] * li["unit_price_cents"] for li in lines))
    grams = sum(li["quantity"] * weights[li["sku"]] for li in lines)
    zone = shipping_zone(user["country"], user["province"])
    fee = shipping_fee(Decimal(grams) / 1000, zone, subtotal).fee
    order: Row = {
        "id": order_id(number),
        "user_id": user["id"],
        "status": status,
        "created_at": created,
        "coupon_code": None,
        "subtotal_cents": to_cents(subtotal),
        "shipping_fee_cents": to_cents(fee),
        "currency": CURRENCY,
        "recipient_name": user["name"],
        "phone": user["phone"],
        "country": user["country"],
        "province": user["province"],
        "city": user["city"],
        "address_line": user["address_line"],
        "postcode": user["postcode"],
        "tracking_no": None,
        "shipped_at": None,
        "delivered_at": None,
        "cancelled_at": None,
        "cancel_reason": None,
        "updated_at": None,
    }
    if rng.random() < 0.3:
        order["coupon_code"] = _first_valid_coupon(order, user, (rng.choice(sorted(COUPONS)),))
    if status in ("shipped", "delivered"):
        order["tracking_no"] = f"SF{rng.randrange(10**10):010d}"
        order["shipped_at"] = created + timedelta(days=rng.randrange(1, 4))
    if status == "delivered":
        order["delivered_at"] = order["shipped_at"] + timedelta(days=rng.randrange(1, 6))
    if status == "cancelled":
        order["cancelled_at"] = created + timedelta(hours=rng.randrange(1, 48))
        order["cancel_reason"] = "customer request / 客户申请取消"
    return order


def _first_valid_coupon(order: Row, user: Row, codes: tuple[str, ...]) -> str | None:
    subtotal = from_cents(order["subtotal_cents"])
    for code in codes:
        try:
            check_coupon(COUPONS[code], subtotal, user["member_tier"])
        except PricingError:
            continue
        return code
    return None


def _seed_payment(order: Row, user: Row) -> Row:
    payable = quote(
        from_cents(order["subtotal_cents"]),
        user["member_tier"],
        order["coupon_code"],
        from_cents(order["shipping_fee_cents"]),
    ).payable
    key = f"seed-{order['id']}"
    return {
        "id": payment_id(key),
        "idempotency_key": key,
        "request_hash": request_hash(order["id"], payable),
        "order_id": order["id"],
        "amount_cents": to_cents(payable),
        "currency": CURRENCY,
        "status": "succeeded",
        "created_at": order["created_at"] + timedelta(minutes=5),
        "refunded_at": None,
        "refund_reason": None,
    }
