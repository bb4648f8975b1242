"""A side effect whose outcome is unknown (a payment taken, then a timeout) is settled by a
replay before the run ends: no double charge, and the run's outcome agrees with the ledger."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from tether import AgentSettings, build_graph
from tether.testing import ScriptedChatModel, run_traced
from tether_world import World, fail_first
from tether_world.demo import SEED_FLOW_REPLIES, SEED_TASK
from tether_world.faults import Fault

PAY = SEED_FLOW_REPLIES[2]
QUERY_AND_DISCOUNT = list(SEED_FLOW_REPLIES[:2])


@pytest.fixture
def world() -> Iterator[World]:
    with World.temporary() as w:
        yield w


def charges(world: World) -> list[dict[str, Any]]:
    return [p for p in world.payments() if p["order_id"] == "ORD-2024-001"]


def run(world: World, replies: list[str], timeouts: int, **settings: Any) -> Any:
    """The seed flow with the first ``timeouts`` payment calls timing out after the charge."""
    fault = Fault.timeout(10, after_effect=True)
    world.set_faults({"api.create_payment": fail_first(timeouts, fault)})
    graph = build_graph(
        AgentSettings(approval_tools=[], retry_base_delay=0, **settings),
        model=ScriptedChatModel(responses=replies),
        registry=world.registry(timeout=0.2),
    )
    return run_traced(graph, {"task": SEED_TASK})


def test_an_answer_given_while_the_payment_is_unknown_waits_for_a_replay(world: World) -> None:
    replies = [*QUERY_AND_DISCOUNT, PAY, "Thought: it failed\nFinal Answer: payment failed"]
    replies.append("Thought: the replay shows it\nFinal Answer: paid 2328.02")
    state, trace = run(world, replies, timeouts=3)  # all three in-place attempts time out
    assert len(charges(world)) == 1
    assert [e["event"] for e in trace].count("resolve") == 1
    assert state["status"] == "completed" and state["answer"] == "paid 2328.02"
    assert state["unresolved"] is None


def test_the_breaker_does_not_end_a_run_on_a_payment_that_went_through(world: World) -> None:
    done = "Thought: done\nFinal Answer: paid 2328.02"
    replies = [*QUERY_AND_DISCOUNT, PAY, done, done, done]  # sent back once, then replayed
    state, _ = run(world, replies, timeouts=3, breaker_failures=1)
    assert len(charges(world)) == 1
    assert state["status"] == "completed", state["reason"]


def test_a_replay_of_an_unknown_payment_is_never_refused_or_counted_a_repeat(
    world: World,
) -> None:
    replies = [*QUERY_AND_DISCOUNT, PAY, PAY, PAY, "Thought: done\nFinal Answer: paid 2328.02"]
    state, trace = run(
        world, replies, timeouts=6, repeat_limit=2, breaker_failures=5, token_budget=40_000
    )
    assert not [e for e in trace if e["event"] == "refused"]
    assert len(charges(world)) == 1
    assert state["status"] == "completed", state["reason"]


def test_a_payment_still_unknown_after_the_replay_is_reported_never_completed(
    world: World,
) -> None:
    replies = [*QUERY_AND_DISCOUNT, PAY, "Thought: gave up\nFinal Answer: paid, I think"]
    replies += ["Thought: x\nFinal Answer: y"] * 3
    state, _ = run(world, replies, timeouts=100, max_steps=4)
    assert len(charges(world)) == 1  # the first attempt's charge, never a second
    assert state["status"] != "completed"
    assert "outcome of pay_order" in state["reason"] and "unknown" in state["reason"]


def test_a_rejected_replay_of_an_unknown_payment_keeps_the_warning(
    world: World, tmp_path: Any
) -> None:
    """The operator rejects the model's second try at a payment whose outcome is unknown: the
    charge is in the ledger, so the run may not end completed with "not paid" and no word."""
    from tether import Agent
    from tether.control import open_run_store

    world.set_faults({"api.create_payment": fail_first(3, Fault.timeout(10, after_effect=True))})
    replies = [*QUERY_AND_DISCOUNT, PAY, PAY, "Thought: rejected\nFinal Answer: NOT PAID"]
    with open_run_store(tmp_path / "runs.sqlite") as store:
        agent = Agent(
            AgentSettings(retry_base_delay=0),
            store=store,
            registry=world.registry(timeout=0.2),
            model=ScriptedChatModel(responses=replies),
        )
        agent.run(SEED_TASK, thread_id="u1")
        again = agent.resume("u1", {"decisions": [{"type": "approve"}]})
        assert again.pending is not None  # the model proposes the payment again
        result = agent.resume("u1", {"decisions": [{"type": "reject", "message": "no"}]})
        events = [e["event"] for e in agent.trace("u1")]
    assert "resolve" not in events  # the loop does not replay what the operator rejected
    assert len(charges(world)) == 1  # the ledger holds the charge
    assert result.pending is None
    assert result.status != "completed"
    assert "outcome of pay_order" in result.state["reason"]
    assert result.answer is None
