"""The design note's flow, end to end against the real world with a scripted model."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from tether import AgentSettings, build_graph
from tether.testing import ScriptedChatModel
from tether_world import World, fail_first
from tether_world.demo import SEED_FLOW_REPLIES, SEED_TASK
from tether_world.faults import Fault


@pytest.fixture
def world() -> Iterator[World]:
    with World.temporary() as w:
        yield w


def seed_order_payments(world: World) -> list[dict[str, Any]]:
    return [p for p in world.payments() if p["order_id"] == "ORD-2024-001"]


def run_seed_flow(world: World, sleeps: Any) -> dict[str, Any]:
    model = ScriptedChatModel(responses=list(SEED_FLOW_REPLIES))
    settings = AgentSettings(approval_tools=[])  # approval gates are tested with a run store
    graph = build_graph(settings, model=model, registry=world.registry(), sleep=sleeps)
    return graph.invoke({"task": SEED_TASK})


def test_query_discount_pay_makes_exactly_one_payment(world: World, sleeps: Any) -> None:
    before = world.snapshot_hash()
    state = run_seed_flow(world, sleeps)
    assert state["status"] == "completed", state["reason"]
    assert [r["kind"] for r in state["history"]] == ["success", "success", "success", "final"]
    # The first Action Input used Chinese quotes; it was repaired, not failed.
    assert state["tool_buffer"][0]["arguments"] == {"order_id": "ORD-2024-001"}
    payments = seed_order_payments(world)
    assert len(payments) == 1
    assert payments[0]["order_id"] == "ORD-2024-001"
    assert Decimal(payments[0]["amount"]) == Decimal("2328.02")
    assert world.snapshot_hash() != before
    assert "2328.02" in state["answer"]


def test_payment_api_failing_twice_then_succeeding_pays_once(world: World, sleeps: Any) -> None:
    world.set_faults({"api.create_payment": fail_first(2, Fault.error(503))})
    state = run_seed_flow(world, sleeps)
    assert state["status"] == "completed", state["reason"]
    assert len(seed_order_payments(world)) == 1
    assert state["tool_retries"] == 2
    assert len(sleeps.delays) == 2


def test_timeout_after_the_charge_returns_the_original_payment(world: World, sleeps: Any) -> None:
    world.set_faults({"api.create_payment": fail_first(1, Fault.timeout(10, after_effect=True))})
    model = ScriptedChatModel(responses=list(SEED_FLOW_REPLIES))
    registry = world.registry(timeout=0.2)
    settings = AgentSettings(approval_tools=[])
    graph = build_graph(settings, model=model, registry=registry, sleep=sleeps)
    state = graph.invoke({"task": SEED_TASK})
    assert state["status"] == "completed", state["reason"]
    payments = seed_order_payments(world)
    assert len(payments) == 1
    pay_result = state["tool_buffer"][-1]["result"]
    assert pay_result["meta"]["retry_count"] == 1
