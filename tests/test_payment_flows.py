"""Faulted payment flows (429, 503, timeouts before and after the charge): never a double
charge, and the run's outcome agrees with the ledger. ``SOAK_FLOWS`` raises the count
(``make soak``)."""

from __future__ import annotations

import os
import random
from typing import Any

import pytest
from tether import AgentSettings, build_graph
from tether.testing import run_traced
from tether_world import World
from tether_world.faults import Fault, TargetFaults

from tests.flows import flow_model

FLOWS = int(os.environ.get("SOAK_FLOWS", "24"))
FAULTS = [
    Fault.rate_limited(0),
    Fault.error(503),
    Fault.timeout(10),  # before the charge
    Fault.timeout(10, after_effect=True),  # the charge is taken, then the answer is lost
]


def plan(rng: random.Random) -> dict[str, Any]:
    kinds = rng.sample(FAULTS, rng.randint(1, len(FAULTS)))
    schedule = {i: rng.choice(kinds) for i in range(rng.randint(0, 12))}  # bursts outlast retries
    rate = rng.choice([0.0, 0.3, 0.6, 0.9])
    return {"api.create_payment": TargetFaults(schedule=schedule, rate=rate, fault=kinds[0])}


def outcome_agrees_with_ledger(state: dict[str, Any], trace: list[Any], charged: int) -> str:
    """Why a run disagrees with the ledger ("" when it agrees)."""
    if charged > 1:
        return f"{charged} charges"
    paid_seen = any(
        e["event"] == "tool_call"
        and e["detail"]["tool"] == "pay_order"
        and e["detail"]["status"] == "success"
        for e in trace
    )
    claims_paid = state["status"] == "completed" and (state["answer"] or "").startswith("paid")
    if charged and not (claims_paid or "outcome of pay_order" in state["reason"]):
        return f"charged, but the run ended {state['status']}: {state['reason']}"
    if claims_paid and not charged:
        return "the run says paid; the ledger has no charge"
    if charged and not paid_seen and claims_paid:
        return "the run says paid without having seen the payment"
    return ""


@pytest.mark.parametrize("seed", range(FLOWS))
def test_faulted_payment_flow_agrees_with_the_ledger(seed: int) -> None:
    rng = random.Random(seed)
    with World.temporary() as world:
        world.set_faults(plan(rng))
        graph = build_graph(
            AgentSettings(approval_tools=[], token_budget=60_000, retry_base_delay=0),
            model=flow_model(),
            registry=world.registry(timeout=0.05),
        )
        state, trace = run_traced(graph, {"task": "pay ORD-2024-001"})
        charged = len([p for p in world.payments() if p["order_id"] == "ORD-2024-001"])
    assert outcome_agrees_with_ledger(state, trace, charged) == ""
