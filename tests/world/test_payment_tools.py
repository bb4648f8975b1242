"""pay_order and refund_payment: the seed's flow, keys, classification of failures."""

from __future__ import annotations

import socket

from langchain_core.runnables import RunnableConfig
from tether.tools import ToolRegistry
from tether.tools.runinfo import run_config
from tether_world import World, idempotency_key
from tether_world.payments_service import IDEMPOTENCY_KEY_RE

from tests.world.helpers import failed, ok, order_with


def test_idempotency_key_is_per_run_and_order() -> None:
    key = idempotency_key("run-1", "ORD-2024-001")
    assert key == idempotency_key("run-1", "ORD-2024-001")
    assert key != idempotency_key("run-2", "ORD-2024-001")
    assert key != idempotency_key("run-1", "ORD-2024-002")
    assert idempotency_key(None, "ORD-2024-001") == "order-ORD-2024-001"
    for candidate in (key, idempotency_key(None, "ORD-2024-1000"), idempotency_key("运行 ✓", "x")):
        assert IDEMPOTENCY_KEY_RE.fullmatch(candidate)


def test_the_seed_flow_query_discount_pay(
    world: World, registry: ToolRegistry, run: RunnableConfig
) -> None:
    before = len(world.payments())
    order = ok(registry.invoke("query_order", {"order_id": "ORD-2024-001"}, run))
    quote = ok(
        registry.invoke(
            "compute_discount",
            {k: order[k] for k in ("subtotal", "member_tier", "coupon_code", "shipping_fee")},
            run,
        )
    )
    result = registry.invoke(
        "pay_order", {"order_id": "ORD-2024-001", "amount": quote["payable"]}, run
    )
    payment = ok(result)
    assert result["meta"]["idempotency_key"] == idempotency_key("run-test-1", "ORD-2024-001")
    assert result["meta"]["replayed"] is False
    ledger = world.payments()
    assert len(ledger) == before + 1
    assert [p for p in ledger if p["order_id"] == "ORD-2024-001"] == [payment]
    assert payment["amount"] == "2328.02" and payment["status"] == "succeeded"
    after = ok(registry.invoke("query_order", {"order_id": "ORD-2024-001"}, run))
    assert after["status"] == "paid" and after["payments"][0]["payment_id"] == payment["id"]


def test_without_a_run_the_key_is_per_order(world: World, registry: ToolRegistry) -> None:
    first = registry.invoke("pay_order", {"order_id": "ORD-2024-001", "amount": "2328.02"})
    again = registry.invoke("pay_order", {"order_id": "ORD-2024-001", "amount": "2328.02"})
    assert first["meta"]["idempotency_key"] == "order-ORD-2024-001"
    assert again["meta"]["replayed"] is True and again["data"] == first["data"]


def test_another_run_cannot_pay_again(registry: ToolRegistry, run: RunnableConfig) -> None:
    ok(registry.invoke("pay_order", {"order_id": "ORD-2024-001", "amount": "2328.02"}, run))
    other = registry.invoke(
        "pay_order", {"order_id": "ORD-2024-001", "amount": "2328.02"}, run_config("run-2")
    )
    failed(other, "already paid", error_type="refused")
    assert other["meta"]["http_status"] == 409


def test_bad_payments_change_nothing(
    world: World, registry: ToolRegistry, run: RunnableConfig
) -> None:
    before = world.snapshot_hash()
    failed(
        registry.invoke("pay_order", {"order_id": "ORD-2024-001", "amount": "2471.60"}, run),
        "amount_mismatch",
        "2328.02",
    )
    failed(
        registry.invoke("pay_order", {"order_id": "ORD-2024-001", "amount": "-1"}, run),
        "greater than 0",
        error_type="validation_error",
    )
    failed(
        registry.invoke("pay_order", {"order_id": "ORD-2024-4321", "amount": "10.00"}, run),
        "does not exist",
    )
    failed(
        registry.invoke("pay_order", {"order_id": order_with(world, "cancelled"), "amount": "1"}),
        "cancelled",
        error_type="refused",
    )
    assert world.snapshot_hash() == before


def test_refund_payment_tool(world: World, registry: ToolRegistry, run: RunnableConfig) -> None:
    payment = ok(
        registry.invoke("pay_order", {"order_id": "ORD-2024-001", "amount": "2328.02"}, run)
    )
    refunded = ok(registry.invoke("refund_payment", {"payment_id": payment["id"].lower()}))
    assert refunded["status"] == "refunded"
    settled = world.snapshot_hash()
    assert ok(registry.invoke("refund_payment", {"payment_id": payment["id"]}))["status"] == (
        "refunded"
    )
    assert world.snapshot_hash() == settled
    order = ok(registry.invoke("query_order", {"order_id": "ORD-2024-001"}))
    assert order["status"] == "cancelled"


def test_refund_refusals(world: World, registry: ToolRegistry) -> None:
    before = world.snapshot_hash()
    delivered = order_with(world, "delivered")
    payment = next(p for p in world.payments() if p["order_id"] == delivered)
    failed(
        registry.invoke("refund_payment", {"payment_id": payment["id"]}),
        "return",
        error_type="refused",
    )
    failed(
        registry.invoke("refund_payment", {"payment_id": "PAY-FFFFFFFFFFFFFFFF"}),
        "does not exist",
    )
    failed(registry.invoke("refund_payment", {"payment_id": "12"}), error_type="validation_error")
    assert world.snapshot_hash() == before


def test_unreachable_payment_api_is_transient(world: World, run: RunnableConfig) -> None:
    with socket.socket() as probe:  # a port that nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    registry = world.registry(payments_url=f"http://127.0.0.1:{port}", timeout=0.5)
    result = registry.invoke("pay_order", {"order_id": "ORD-2024-001", "amount": "2328.02"}, run)
    failed(result, "ConnectError", error_type="transient")
