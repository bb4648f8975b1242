"""The seed is deterministic, the right size, bilingual, and obeys the pricing rules."""

from __future__ import annotations

import re
from collections import Counter

from tether_world.money import from_cents, to_cents
from tether_world.pricing import quote
from tether_world.seed import generate


def test_same_seed_same_rows_other_seed_other_rows() -> None:
    assert generate.__wrapped__(2024) == generate.__wrapped__(2024)  # type: ignore[attr-defined]
    assert generate(7).tables["users"] != generate(2024).tables["users"]


def test_sizes_and_id_formats() -> None:
    data = generate()
    assert data.count("users") == 500
    assert data.count("orders") == 1000
    assert data.count("products") == 50
    assert data.count("variants") > 50
    ids = [o["id"] for o in data.tables["orders"]]
    assert ids[0] == "ORD-2024-001" and ids[-1] == "ORD-2024-1000"
    assert all(re.fullmatch(r"ORD-2024-\d{3,}", i) for i in ids)
    assert len(set(ids)) == len(ids)


def test_first_order_is_the_running_example() -> None:
    data = generate()
    first = data.tables["orders"][0]
    user = next(u for u in data.tables["users"] if u["id"] == first["user_id"])
    assert first["status"] == "pending"
    assert user["member_tier"] == "gold" and first["coupon_code"] is not None


def test_statuses_names_and_places_are_varied() -> None:
    data = generate()
    statuses = Counter(o["status"] for o in data.tables["orders"])
    assert set(statuses) == {"pending", "paid", "shipped", "delivered", "cancelled"}
    languages = Counter(u["language"] for u in data.tables["users"])
    assert languages["zh"] > 100 and languages["en"] > 100
    assert any(re.search(r"[\u4e00-\u9fff]", u["name"]) for u in data.tables["users"])
    assert any("'" in u["name"] for u in data.tables["users"])  # O'Brien: quotes are data
    assert {u["country"] for u in data.tables["users"]} >= {"CN", "US", "GB"}
    assert len({u["email"] for u in data.tables["users"]}) == 500


def test_seeded_orders_and_payments_follow_the_pricing_rules() -> None:
    data = generate()
    users = {u["id"]: u for u in data.tables["users"]}
    orders = {o["id"]: o for o in data.tables["orders"]}
    totals: Counter[str] = Counter()
    for item in data.tables["order_items"]:
        totals[item["order_id"]] += item["quantity"] * item["unit_price_cents"]
    assert {oid: o["subtotal_cents"] for oid, o in orders.items()} == dict(totals)
    paid = [o for o in orders.values() if o["status"] in ("paid", "shipped", "delivered")]
    payments = {p["order_id"]: p for p in data.tables["payments"]}
    assert set(payments) == {o["id"] for o in paid}
    for order in paid:
        expected = quote(
            from_cents(order["subtotal_cents"]),
            users[order["user_id"]]["member_tier"],  # coupons are valid: quote would raise
            order["coupon_code"],
            from_cents(order["shipping_fee_cents"]),
        ).payable
        assert payments[order["id"]]["amount_cents"] == to_cents(expected)
