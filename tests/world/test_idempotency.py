"""One idempotency key never charges twice, even when duplicates race each other."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from typing import TypeVar

import pytest
from langchain_core.runnables import RunnableConfig
from tether.tools import ToolRegistry
from tether_world import World
from tether_world import db as world_db
from tether_world import payments_service as service_module
from tether_world.payments_service import PaymentError, PaymentService

from tests.world.helpers import payments_of

T = TypeVar("T")
PAYABLE = Decimal("2328.02")
THREADS = 12


def race(n: int, call: Callable[[int], T]) -> list[T | BaseException]:
    """Run ``call(i)`` in ``n`` threads released together; results or exceptions."""
    barrier = threading.Barrier(n)

    def one(i: int) -> T | BaseException:
        barrier.wait()
        try:
            return call(i)
        except Exception as exc:
            return exc

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(one, range(n)))


def test_concurrent_duplicates_with_one_key_charge_once(world: World) -> None:
    service = PaymentService(world.engine)
    results = race(THREADS, lambda _: service.create("dup-key-0001", "ORD-2024-001", PAYABLE))
    assert not [r for r in results if isinstance(r, BaseException)]
    payments = [r[0] for r in results]  # type: ignore[index]
    assert len({p["id"] for p in payments}) == 1
    assert sorted(r[1] for r in results) == [False] + [True] * (THREADS - 1)  # type: ignore[index]
    assert len(payments_of(world, "ORD-2024-001")) == 1


def test_concurrent_keys_for_one_order_charge_once(world: World) -> None:
    service = PaymentService(world.engine)
    results = race(THREADS, lambda i: service.create(f"key-{i:04d}-xyz", "ORD-2024-001", PAYABLE))
    successes = [r for r in results if not isinstance(r, BaseException)]
    refusals = [r for r in results if isinstance(r, PaymentError)]
    assert len(successes) == 1 and len(refusals) == THREADS - 1
    assert {r.status for r in refusals} == {409}
    assert len(payments_of(world, "ORD-2024-001")) == 1


def test_concurrent_pay_order_calls_over_http_charge_once(
    world: World, registry: ToolRegistry, run: RunnableConfig
) -> None:
    args = {"order_id": "ORD-2024-001", "amount": "2328.02"}
    results = race(8, lambda _: registry.invoke("pay_order", args, run))
    assert all(r["status"] == "success" for r in results), results  # type: ignore[index]
    assert len({r["data"]["id"] for r in results}) == 1  # type: ignore[index]
    assert sum(not r["meta"]["replayed"] for r in results) == 1  # type: ignore[index]
    assert len(payments_of(world, "ORD-2024-001")) == 1


def blind_first_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    """The next key lookup misses the row a concurrent request has just written."""
    real_by_key = service_module._by_key
    misses = iter([True])

    def by_key(conn, key):  # type: ignore[no-untyped-def]
        return None if next(misses, False) else real_by_key(conn, key)

    monkeypatch.setattr(service_module, "_by_key", by_key)


def test_losing_the_race_on_the_order_status_replays(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Databases without a global write lock: the winner paid the order before we read it."""
    service = PaymentService(world.engine)
    original, _ = service.create("race-key-0001", "ORD-2024-001", PAYABLE)
    blind_first_lookup(monkeypatch)
    again, replayed = service.create("race-key-0001", "ORD-2024-001", PAYABLE)
    assert replayed and again == original
    assert len(payments_of(world, "ORD-2024-001")) == 1


def test_losing_the_race_on_the_unique_key_replays(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The winner's row is there but the order still reads pending: the constraint decides."""
    service = PaymentService(world.engine)
    original, _ = service.create("race-key-0002", "ORD-2024-001", PAYABLE)
    with world.engine.begin() as conn:
        conn.execute(
            world_db.orders.update()
            .where(world_db.orders.c.id == "ORD-2024-001")
            .values(status="pending")
        )
    blind_first_lookup(monkeypatch)
    again, replayed = service.create("race-key-0002", "ORD-2024-001", PAYABLE)
    assert replayed and again == original
    assert len(payments_of(world, "ORD-2024-001")) == 1
