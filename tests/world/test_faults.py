"""Fault plans: deterministic schedules and rates, on API endpoints and on tools."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import httpx
import pytest
from langchain_core.runnables import RunnableConfig
from tether.tools import ToolRegistry
from tether_world import Fault, FaultInjector, World, at_rate, fail_first, payments_app
from tether_world.payments_service import PaymentService

from tests.world.helpers import failed, ok, payments_of

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


class Stall:
    """Stands in for the payment API's fault delay: holds the request until released.

    A client timeout then always fires (the request is held, however slow the machine), and
    the test knows when the held request reached the stall and when its charge finished,
    instead of sleeping and hoping.
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.reached = threading.Event()
        self.release = threading.Event()
        self.charges_done = 0
        self._done = threading.Condition()
        create = PaymentService.create

        def counted(service: PaymentService, *args: Any, **kwargs: Any) -> Any:
            try:
                return create(service, *args, **kwargs)
            finally:
                with self._done:
                    self.charges_done += 1
                    self._done.notify_all()

        monkeypatch.setattr(payments_app, "_strike", self._strike)
        monkeypatch.setattr(PaymentService, "create", counted)

    async def _strike(self, fault: Fault) -> None:
        self.reached.set()
        while not self.release.is_set():
            await asyncio.sleep(0.01)

    def wait_for_charges(self, count: int) -> None:
        with self._done:
            assert self._done.wait_for(lambda: self.charges_done >= count, timeout=WAIT)


WAIT = 60  # seconds: a bound for a hung request, never a speed assertion


def test_timeout_after_the_charge_returns_the_original_payment(
    world: World, run: RunnableConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    stall = Stall(monkeypatch)
    registry = world.registry(timeout=0.05)
    world.set_faults({"api.create_payment": fail_first(1, Fault.timeout(1, after_effect=True))})
    first = registry.invoke("pay_order", PAY, run)
    failed(first, "Timeout", error_type="transient")
    assert stall.reached.wait(WAIT)  # the stall comes after the charge...
    recorded = payments_of(world)
    assert len(recorded) == 1  # ...so it went through although the client gave up
    # the retry is given time to answer: only the first call is meant to time out
    retry = world.registry(timeout=WAIT).invoke("pay_order", PAY, run)
    assert ok(retry) == recorded[0]
    assert retry["meta"]["replayed"] is True
    assert payments_of(world) == recorded
    stall.release.set()


def test_timeout_before_the_charge_still_charges_once(
    world: World, run: RunnableConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    stall = Stall(monkeypatch)
    registry = world.registry(timeout=0.05)
    world.set_faults({"api.create_payment": fail_first(1, Fault.timeout(1))})
    failed(registry.invoke("pay_order", PAY, run), "Timeout", error_type="transient")
    assert stall.reached.wait(WAIT)
    assert payments_of(world) == []  # held before the charge
    patient = world.registry(timeout=WAIT)  # the retry's own wait is not what this tests
    payment = ok(patient.invoke("pay_order", PAY, run))
    stall.release.set()
    stall.wait_for_charges(2)  # the held request went on: it must find the key taken
    assert payments_of(world) == [payment]


def test_500_after_the_charge_then_retry_replays(
    world: World, registry: ToolRegistry, run: RunnableConfig
) -> None:
    world.set_faults({"api.create_payment": fail_first(1, Fault(status=500, after_effect=True))})
    failed(registry.invoke("pay_order", PAY, run), "HTTP 500", error_type="transient")
    retry = registry.invoke("pay_order", PAY, run)
    assert retry["meta"]["replayed"] is True
    assert payments_of(world) == [retry["data"]]


def test_added_latency_holds_only_the_faulted_call(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    stall = Stall(monkeypatch)
    client = world.payments_client(timeout=0.05)
    payment_id = world.payments()[0]["id"]
    world.set_faults({"api.get_payment": fail_first(1, Fault.latency(0.1))})
    with pytest.raises(httpx.ReadTimeout):
        client.get_payment(payment_id)  # held by the latency fault
    assert stall.reached.is_set()
    stall.reached.clear()
    stall.release.set()
    slow_client = world.payments_client(timeout=WAIT)
    assert slow_client.get_payment(payment_id)["id"] == payment_id
    assert not stall.reached.is_set()  # the second call met no fault


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
