"""Fault plans: deterministic schedules and rates, on API endpoints and on tools."""

from __future__ import annotations

import time

import pytest
from langchain_core.runnables import RunnableConfig

from tests.world.helpers import failed, ok, payments_of
from tether.tools import ToolRegistry
from tether.world import Fault, FaultInjector, World, at_rate, fail_first

PAY = {"order_id": "ORD-2024-001", "amount": "2328.02"}


# --- the injector -----------------------------------------------------------------------------
def test_schedule_by_call_index() -> None:
    injector = FaultInjector(["t"])
    injector.set_plan({"t": fail_first(2, Fault.error(503))})
    assert [injector.next_fault("t") is not None for _ in range(4)] == [True, True, False, False]
    assert injector.calls("t") == 4
    injector.rewind()
    assert injector.calls("t") == 0 and injector.next_fault("t") is not None


def test_plans_can_be_plain_data() -> None:
    injector = FaultInjector(["t"])
    injector.set_plan({"t": {"schedule": {"1": {"status": 429, "retry_after_s": 3}}}})
    assert injector.next_fault("t") is None
    assert injector.next_fault("t") == Fault.rate_limited(3)


def test_seeded_rate_is_reproducible() -> None:
    def draws(seed: int) -> list[bool]:
        injector = FaultInjector(["t"])
        injector.set_plan({"t": at_rate(0.5, Fault.error(500), seed=seed)})
        return [injector.next_fault("t") is not None for _ in range(40)]

    assert draws(1) == draws(1)
    assert draws(1) != draws(2)
    assert 5 < sum(draws(1)) < 35


def test_invalid_plans() -> None:
    injector = FaultInjector(["t"])
    with pytest.raises(ValueError, match="needs the fault"):
        injector.set_plan({"t": {"rate": 0.5}})
    with pytest.raises(ValueError, match="unknown fault targets"):
        injector.set_plan({"other": fail_first(1, Fault.error())})


# --- tools ------------------------------------------------------------------------------------
def test_tool_fault_is_transient_then_clears(world: World, registry: ToolRegistry) -> None:
    world.set_faults({"query_order": fail_first(1, Fault.error(503))})
    first = registry.invoke("query_order", {"order_id": "ORD-2024-001"})
    failed(first, "injected fault", "503", error_type="transient")
    assert first["meta"]["transient"] is True
    ok(registry.invoke("query_order", {"order_id": "ORD-2024-001"}))


def test_tool_fault_with_a_client_error_is_permanent(world: World, registry: ToolRegistry) -> None:
    world.set_faults({"calculate": fail_first(1, Fault.error(400))})
    failed(registry.invoke("calculate", {"expression": "1+1"}), "400", error_type="tool_error")


def test_tool_fault_after_the_effect(world: World, registry: ToolRegistry) -> None:
    world.set_faults({"cancel_order": fail_first(1, Fault(status=503, after_effect=True))})
    failed(registry.invoke("cancel_order", {"order_id": "ORD-2024-001"}), error_type="transient")
    status = ok(registry.invoke("query_order", {"order_id": "ORD-2024-001"}))["status"]
    assert status == "cancelled"  # the effect happened although the caller saw a failure


def test_reset_replays_the_plan(world: World, registry: ToolRegistry) -> None:
    world.set_faults({"calculate": fail_first(1, Fault.error(503))})
    assert registry.invoke("calculate", {"expression": "1"})["status"] == "error"
    assert registry.invoke("calculate", {"expression": "1"})["status"] == "success"
    world.reset()
    assert registry.invoke("calculate", {"expression": "1"})["status"] == "error"


# --- the payment API --------------------------------------------------------------------------
def test_two_503s_then_success_charges_exactly_once(
    world: World, registry: ToolRegistry, run: RunnableConfig
) -> None:
    world.set_faults({"api.create_payment": fail_first(2, Fault.error(503, retry_after_s=1))})
    outcomes = [registry.invoke("pay_order", PAY, run) for _ in range(3)]
    for outcome in outcomes[:2]:
        failed(outcome, "HTTP 503", "retry after 1s", error_type="transient")
    payment = ok(outcomes[2])
    assert payments_of(world) == [payment]
    assert payment["amount"] == "2328.02"
    assert world.faults.calls("api.create_payment") == 3


def test_rate_limit_reports_retry_after(
    world: World, registry: ToolRegistry, run: RunnableConfig
) -> None:
    world.set_faults({"api.create_payment": fail_first(1, Fault.rate_limited(2))})
    failed(
        registry.invoke("pay_order", PAY, run), "HTTP 429", "retry after 2s", error_type="transient"
    )
    ok(registry.invoke("pay_order", PAY, run))
    assert len(payments_of(world)) == 1


def test_timeout_after_the_charge_returns_the_original_payment(
    world: World, run: RunnableConfig
) -> None:
    registry = world.registry(timeout=0.05)
    world.set_faults({"api.create_payment": fail_first(1, Fault.timeout(0.2, after_effect=True))})
    first = registry.invoke("pay_order", PAY, run)
    failed(first, "Timeout", error_type="transient")
    recorded = payments_of(world)
    assert len(recorded) == 1  # the charge went through before the client gave up
    retry = registry.invoke("pay_order", PAY, run)
    assert ok(retry) == recorded[0]
    assert retry["meta"]["replayed"] is True
    assert payments_of(world) == recorded


def test_timeout_before_the_charge_still_charges_once(world: World, run: RunnableConfig) -> None:
    registry = world.registry(timeout=0.05)
    world.set_faults({"api.create_payment": fail_first(1, Fault.timeout(0.15))})
    failed(registry.invoke("pay_order", PAY, run), "Timeout", error_type="transient")
    assert payments_of(world) == []
    payment = ok(registry.invoke("pay_order", PAY, run))
    time.sleep(0.2)  # let the stalled first request finish: it must find the key taken
    assert payments_of(world) == [payment]


def test_500_after_the_charge_then_retry_replays(
    world: World, registry: ToolRegistry, run: RunnableConfig
) -> None:
    world.set_faults({"api.create_payment": fail_first(1, Fault(status=500, after_effect=True))})
    failed(registry.invoke("pay_order", PAY, run), "HTTP 500", error_type="transient")
    retry = registry.invoke("pay_order", PAY, run)
    assert retry["meta"]["replayed"] is True
    assert payments_of(world) == [retry["data"]]


def test_added_latency(world: World) -> None:
    client = world.payments_client(timeout=2)
    payment_id = world.payments()[0]["id"]
    world.set_faults({"api.get_payment": fail_first(1, Fault.latency(0.1))})
    started = time.perf_counter()
    client.get_payment(payment_id)
    assert time.perf_counter() - started >= 0.1
    started = time.perf_counter()
    client.get_payment(payment_id)
    assert time.perf_counter() - started < 0.1


def test_seeded_api_fault_rate_replays_after_reset(world: World) -> None:
    client = world.payments_client(timeout=2)
    payment_id = world.payments()[0]["id"]
    world.set_faults({"api.get_payment": at_rate(0.5, Fault.error(500), seed=3)})

    def outcomes() -> list[bool]:
        results = []
        for _ in range(12):
            try:
                client.get_payment(payment_id)
                results.append(True)
            except Exception:
                results.append(False)
        return results

    first = outcomes()
    world.reset()
    assert outcomes() == first
    assert True in first and False in first
