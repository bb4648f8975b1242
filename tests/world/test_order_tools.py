"""Order, user and product tools: what they return, what they refuse, what they change."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from tether.tools import ToolRegistry
from tether_world import World
from tether_world import db as world_db

from tests.world.helpers import failed, ok, order_with


# --- query_order ------------------------------------------------------------------------------
def test_query_order_returns_what_pricing_needs(registry: ToolRegistry) -> None:
    data = ok(registry.invoke("query_order", {"order_id": "ord-2024-1"}))
    assert data["order_id"] == "ORD-2024-001"
    assert data["status"] == "pending"
    assert data["member_tier"] == "gold" and data["coupon_code"] == "SAVE20"
    line_sum = sum(float(item["line_total"]) for item in data["items"])
    assert f"{line_sum:.2f}" == data["subtotal"]
    assert data["allowed_actions"] == ["pay_order", "cancel_order", "update_shipping_address"]
    assert data["payments"] == []


def test_query_order_unknown_id_says_format_and_absence(registry: ToolRegistry) -> None:
    failed(
        registry.invoke("query_order", {"order_id": "ORD-2024-9999"}),
        "ORD-2024-9999 does not exist",
        "ORD-2024-001",
        "find_user",
    )


@pytest.mark.parametrize("bad", ["12345", "ORD-001", "ORD-2024-1; DROP TABLE orders", ""])
def test_query_order_malformed_id_is_a_validation_error(registry: ToolRegistry, bad: str) -> None:
    failed(
        registry.invoke("query_order", {"order_id": bad}),
        "a 4-digit year",  # the format, not a callable example id
        error_type="validation_error",
    )


def test_paid_order_lists_its_payment(world: World, registry: ToolRegistry) -> None:
    data = ok(registry.invoke("query_order", {"order_id": order_with(world, "paid")}))
    assert [p["status"] for p in data["payments"]] == ["succeeded"]
    assert data["allowed_actions"] == ["refund_payment", "update_shipping_address"]


# --- find_user / list_user_orders -------------------------------------------------------------
def test_find_user_by_email_any_case(registry: ToolRegistry) -> None:
    data = ok(registry.invoke("find_user", {"email": " USER0001@Example.CN "}))
    assert [u["user_id"] for u in data["users"]] == ["U0001"]


def test_find_user_by_name_and_postcode(world: World, registry: ToolRegistry) -> None:
    with world.engine.connect() as conn:
        user = conn.execute(
            sa.select(world_db.users).where(world_db.users.c.name.like("%'%")).limit(1)
        ).one()
    data = ok(registry.invoke("find_user", {"name": user.name, "postcode": user.postcode}))
    assert user.id in [u["user_id"] for u in data["users"]]  # a name with a quote works


def test_find_user_needs_email_or_name_and_postcode(registry: ToolRegistry) -> None:
    failed(registry.invoke("find_user", {"name": "林洋"}), "name and postcode")
    failed(registry.invoke("find_user", {"email": "nobody@example.com"}), "No customer")


def test_list_user_orders_newest_first_with_status_filter(registry: ToolRegistry) -> None:
    every = ok(registry.invoke("list_user_orders", {"user_id": "U0001", "limit": 100}))
    dates = [o["created_at"] for o in every["orders"]]
    assert dates == sorted(dates, reverse=True) and every["total"] == len(dates)
    pending = ok(registry.invoke("list_user_orders", {"user_id": "u0001", "status": "pending"}))
    assert "ORD-2024-001" in [o["order_id"] for o in pending["orders"]]
    assert {o["status"] for o in pending["orders"]} == {"pending"}
    one = ok(registry.invoke("list_user_orders", {"user_id": "U0001", "limit": 1}))
    assert one["returned"] == 1 and one["total"] == every["total"]


def test_list_user_orders_unknown_user(registry: ToolRegistry) -> None:
    failed(registry.invoke("list_user_orders", {"user_id": "U9999"}), "U9999", "find_user")
    failed(
        registry.invoke("list_user_orders", {"user_id": "U0001", "status": "lost"}),
        "status",
        error_type="validation_error",
    )


# --- get_product ------------------------------------------------------------------------------
def test_get_product_by_id_and_by_sku(registry: ToolRegistry) -> None:
    product = ok(registry.invoke("get_product", {"product_id": "P001"}))
    assert product["name_en"].startswith("Wireless Earbuds") and "耳机" in product["name_zh"]
    assert [v["sku"] for v in product["variants"]] == ["P001-01", "P001-02"]
    assert product["variants"][0]["weight_kg"] == "0.15"
    variant = ok(registry.invoke("get_product", {"product_id": "p001-02"}))
    assert variant["requested_sku"] == "P001-02"


def test_get_product_unknown(registry: ToolRegistry) -> None:
    failed(registry.invoke("get_product", {"product_id": "P999"}), "P001 to P050")
    failed(registry.invoke("get_product", {"product_id": "P001-09"}), "P001-01, P001-02")


# --- cancel_order -----------------------------------------------------------------------------
def stock(world: World, sku: str) -> int:
    with world.engine.connect() as conn:
        query = sa.select(world_db.variants.c.stock).where(world_db.variants.c.sku == sku)
        return int(conn.execute(query).scalar_one())


def test_cancel_pending_order_restocks(world: World, registry: ToolRegistry) -> None:
    items = ok(registry.invoke("query_order", {"order_id": "ORD-2024-001"}))["items"]
    before = {i["sku"]: stock(world, i["sku"]) for i in items}
    data = ok(registry.invoke("cancel_order", {"order_id": "ORD-2024-001", "reason": "改主意了"}))
    assert data["status"] == "cancelled"
    for item in items:
        assert stock(world, item["sku"]) == before[item["sku"]] + item["quantity"]
    after = ok(registry.invoke("query_order", {"order_id": "ORD-2024-001"}))
    assert after["status"] == "cancelled" and after["allowed_actions"] == []


@pytest.mark.parametrize(
    ("status", "why"),
    [
        ("paid", "refund_payment"),
        ("shipped", "cannot be cancelled"),
        ("delivered", "start a return"),
        ("cancelled", "already cancelled"),
    ],
)
def test_cancel_refuses_what_the_status_forbids(
    world: World, registry: ToolRegistry, status: str, why: str
) -> None:
    before = world.snapshot_hash()
    failed(
        registry.invoke("cancel_order", {"order_id": order_with(world, status)}),
        why,
        error_type="refused",
    )
    assert world.snapshot_hash() == before


def test_cancel_unknown_order_changes_nothing(world: World, registry: ToolRegistry) -> None:
    before = world.snapshot_hash()
    failed(registry.invoke("cancel_order", {"order_id": "ORD-2024-5000"}), "does not exist")
    assert world.snapshot_hash() == before


# --- update_shipping_address ------------------------------------------------------------------
NEW_ADDRESS = {
    "address_line": "淮海中路 1号 Robert'); DROP TABLE orders;-- 5栋",
    "city": "上海",
    "province": "上海市",
    "postcode": "200031",
    "recipient_name": 'O\'Brien "Bobby" 王',
}


def test_update_address_stores_sql_characters_as_data(world: World, registry: ToolRegistry) -> None:
    data = ok(
        registry.invoke("update_shipping_address", {"order_id": "ORD-2024-001", **NEW_ADDRESS})
    )
    assert data["shipping_address"]["address_line"] == NEW_ADDRESS["address_line"]
    again = ok(registry.invoke("query_order", {"order_id": "ORD-2024-001"}))
    assert again["shipping_address"]["recipient_name"] == NEW_ADDRESS["recipient_name"]
    with world.engine.connect() as conn:
        assert conn.scalar(sa.select(sa.func.count()).select_from(world_db.orders)) == 1000


def test_update_address_recomputes_fee_of_a_pending_order(
    world: World, registry: ToolRegistry
) -> None:
    pending = order_with(world, "pending", world_db.orders.c.subtotal_cents < 19900)
    before = ok(registry.invoke("query_order", {"order_id": pending}))
    abroad = {"address_line": "1 Market Street", "city": "San Francisco", "province": "CA"}
    data = ok(
        registry.invoke(
            "update_shipping_address",
            {"order_id": pending, **abroad, "postcode": "94105", "country": "us"},
        )
    )
    assert data["previous_shipping_fee"] == before["shipping_fee"]
    assert float(data["shipping_fee"]) >= 80.0  # international first kilogram
    assert data["shipping_address"]["country"] == "US"


def test_paid_order_may_move_only_at_the_same_fee(world: World, registry: ToolRegistry) -> None:
    paid = order_with(
        world,
        "paid",
        world_db.orders.c.shipping_fee_cents == 0,
        world_db.orders.c.country == "CN",
        world_db.orders.c.province.not_in(["新疆维吾尔自治区", "西藏自治区", "青海省"]),
    )
    ok(registry.invoke("update_shipping_address", {"order_id": paid, **NEW_ADDRESS}))
    before = world.snapshot_hash()
    failed(
        registry.invoke(
            "update_shipping_address",
            {
                "order_id": paid,
                "address_line": "1 Orchard Road",
                "city": "Singapore",
                "province": "Singapore",
                "postcode": "238801",
                "country": "SG",
            },
        ),
        "already paid",
        "same fee",
        error_type="refused",
    )
    assert world.snapshot_hash() == before


@pytest.mark.parametrize("status", ["shipped", "delivered", "cancelled"])
def test_update_address_refused_after_shipping_or_cancel(
    world: World, registry: ToolRegistry, status: str
) -> None:
    before = world.snapshot_hash()
    failed(
        registry.invoke(
            "update_shipping_address", {"order_id": order_with(world, status), **NEW_ADDRESS}
        ),
        status,
        error_type="refused",
    )
    assert world.snapshot_hash() == before


def test_update_address_checks_chinese_postcodes(world: World, registry: ToolRegistry) -> None:
    before = world.snapshot_hash()
    failed(
        registry.invoke(
            "update_shipping_address",
            {"order_id": "ORD-2024-001", **NEW_ADDRESS, "postcode": "20003"},
        ),
        "6 digits",
    )
    assert world.snapshot_hash() == before


# --- SQL-significant characters everywhere ----------------------------------------------------
INJECTIONS = ["' OR '1'='1", "x'; DELETE FROM users; --", '" OR ""="', "%", "_", "\\", "林' --"]


@pytest.mark.parametrize("text", INJECTIONS)
def test_sql_characters_are_data_in_every_lookup(
    world: World, registry: ToolRegistry, text: str
) -> None:
    before = world.snapshot_hash()
    failed(registry.invoke("find_user", {"email": text}), "No customer")
    failed(registry.invoke("find_user", {"name": text, "postcode": text[:16]}), "No customer")
    failed(registry.invoke("compute_discount", {"subtotal": "9", "coupon_code": text}), "Unknown")
    for tool, field in [("query_order", "order_id"), ("get_product", "product_id")]:
        failed(registry.invoke(tool, {field: text}), error_type="validation_error")
    assert world.snapshot_hash() == before


@pytest.mark.parametrize("text", INJECTIONS)
def test_sql_characters_are_stored_verbatim(
    world: World, registry: ToolRegistry, text: str
) -> None:
    ok(registry.invoke("cancel_order", {"order_id": "ORD-2024-001", "reason": text}))
    with world.engine.connect() as conn:
        reason = conn.scalar(
            sa.select(world_db.orders.c.cancel_reason).where(world_db.orders.c.id == "ORD-2024-001")
        )
        assert reason == text
        assert conn.scalar(sa.select(sa.func.count()).select_from(world_db.users)) == 500
