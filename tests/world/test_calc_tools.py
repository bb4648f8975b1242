"""Calculation tools through the registry: envelopes, validation, messages."""

from __future__ import annotations

import pytest
from tether.tools import ToolRegistry
from tether_world import World

from tests.world.helpers import failed, ok


def test_compute_discount_for_the_running_example(registry: ToolRegistry) -> None:
    order = ok(registry.invoke("query_order", {"order_id": "ORD-2024-001"}))
    args = {k: order[k] for k in ("subtotal", "member_tier", "coupon_code", "shipping_fee")}
    quote = ok(registry.invoke("compute_discount", args))
    assert quote == {
        "currency": "CNY",
        "subtotal": "2471.60",
        "member_tier": "gold",
        "coupon_code": "SAVE20",
        "member_discount": "123.58",
        "coupon_discount": "20.00",
        "discount": "143.58",
        "shipping_fee": "0.00",
        "payable": "2328.02",
        "notes": quote["notes"],
    }


def test_compute_discount_accepts_numbers_and_strings(registry: ToolRegistry) -> None:
    as_number = ok(registry.invoke("compute_discount", {"subtotal": 0.1, "member_tier": "gold"}))
    as_text = ok(registry.invoke("compute_discount", {"subtotal": "0.10", "member_tier": "gold"}))
    assert as_number == as_text and as_text["payable"] == "0.09"


@pytest.mark.parametrize(
    ("args", "fragment", "kind"),
    [
        ({"subtotal": "-5"}, "greater than or equal to 0", "validation_error"),
        ({"subtotal": "10.005"}, "2 decimal places", "validation_error"),
        ({"subtotal": "abc"}, "subtotal", "validation_error"),
        ({"subtotal": "100", "member_tier": "diamond"}, "member_tier", "validation_error"),
        ({"subtotal": "100", "coupon_code": "NOPE"}, "Unknown coupon code 'NOPE'", "tool_error"),
        ({"subtotal": "100", "coupon_code": "SAVE20"}, "minimum spend", "tool_error"),
    ],
)
def test_compute_discount_errors(
    world: World, registry: ToolRegistry, args: dict, fragment: str, kind: str
) -> None:
    before = world.snapshot_hash()
    failed(registry.invoke("compute_discount", args), fragment, error_type=kind)
    assert world.snapshot_hash() == before


def test_compute_shipping(registry: ToolRegistry) -> None:
    data = ok(registry.invoke("compute_shipping", {"weight_kg": "2.35", "province": "西藏自治区"}))
    assert (data["zone"], data["billable_kg"], data["shipping_fee"]) == ("remote", 3, "36.00")
    free = ok(registry.invoke("compute_shipping", {"weight_kg": 1, "subtotal": "199"}))
    assert free["free_shipping"] and free["shipping_fee"] == "0.00"
    failed(
        registry.invoke("compute_shipping", {"weight_kg": 500}),
        "weight_kg",
        error_type="validation_error",
    )


def test_convert_currency(registry: ToolRegistry) -> None:
    data = ok(
        registry.invoke(
            "convert_currency", {"amount": "2328.02", "from_currency": "cny", "to_currency": "usd"}
        )
    )
    assert data["converted"] == "323.34"  # 2328.02 / 7.20 = 323.336... -> 323.34
    failed(
        registry.invoke(
            "convert_currency", {"amount": "1", "from_currency": "BTC", "to_currency": "CNY"}
        ),
        "Unsupported currency 'BTC'",
    )


def test_calculate_through_the_registry(registry: ToolRegistry) -> None:
    assert ok(registry.invoke("calculate", {"expression": "0.1 + 0.2"}))["result"] == "0.3"
    rounded = ok(registry.invoke("calculate", {"expression": "2 / 3", "round_to": 2}))
    assert rounded["result"] == "0.67"
    failed(registry.invoke("calculate", {"expression": "open('/etc/passwd')"}), "function call")
    failed(registry.invoke("calculate", {"expression": "2 ** 999"}), "Exponent")
