"""Tool health shared through LangGraph's store: the breaker's decisions (pure), and the loop
refusing a paused tool without calling it, for every run on the store, and probing it again."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langgraph.store.memory import InMemoryStore
from tether import AgentSettings, ToolRegistry, TransientToolError, build_graph, tool
from tether.decisions.health import ToolHealth, admit, claimed, recorded
from tether.nodes.health import NAMESPACE, read
from tether.testing import ScriptedChatModel, run_traced
from tether_world import World, fail_first
from tether_world.demo import SEED_FLOW_REPLIES, SEED_TASK
from tether_world.faults import Fault

S = AgentSettings(health_failures=3, health_window=60, health_cooldown=30)
T0 = 1_000_000.0


def failed_times(times: list[float], settings: AgentSettings = S) -> ToolHealth:
    health = ToolHealth()
    for at in times:
        health = recorded(health, "TransientToolError: HTTP 503", 0.1, at, settings)
    return health


# --- the decisions ------------------------------------------------------------------------------
def test_a_healthy_tool_is_allowed() -> None:
    assert admit(ToolHealth(), "pay_order", T0, S).verdict == "allow"


def test_failures_below_the_threshold_keep_the_breaker_closed() -> None:
    health = failed_times([T0, T0 + 1])
    assert health.state == "closed" and len(health.failures) == 2
    assert admit(health, "pay_order", T0 + 2, S).verdict == "allow"


def test_the_threshold_opens_it_and_the_refusal_names_the_tool_and_why() -> None:
    health = failed_times([T0, T0 + 1, T0 + 2])
    assert health.state == "open" and health.opened_at == T0 + 2
    verdict, reason, _ = admit(health, "pay_order", T0 + 3, S)
    assert verdict == "refuse"
    assert reason.startswith("pay_order is paused and was not called")
    assert "3 calls in a row failed" in reason and "HTTP 503" in reason
    assert "tried again in 29 s" in reason


def test_failures_older_than_the_window_do_not_count() -> None:
    health = failed_times([T0, T0 + 2, T0 + 61.5])
    assert health.state == "closed" and health.failures == [T0 + 2, T0 + 61.5]


def test_an_answer_between_failures_starts_the_count_again() -> None:
    health = recorded(failed_times([T0, T0 + 1]), None, 0.1, T0 + 2, S)
    health = recorded(health, "boom", 0.1, T0 + 3, S)
    assert health.state == "closed" and health.failures == [T0 + 3]


def test_the_failure_list_stays_bounded() -> None:
    health = failed_times([T0 + i for i in range(50)])
    assert len(health.failures) == S.health_failures and health.calls == 50


def test_latency_is_a_moving_average() -> None:
    health = recorded(ToolHealth(), None, 1.0, T0, S)
    health = recorded(health, None, 1.0, T0, S)
    assert 0.0 < health.latency_s < 1.0
    assert recorded(health, None, 0.0, T0, S).latency_s < health.latency_s


def test_after_the_cool_down_one_call_is_the_probe_and_the_others_wait() -> None:
    opened = failed_times([T0, T0, T0])
    assert admit(opened, "pay_order", T0 + 29.9, S).verdict == "refuse"
    assert admit(opened, "pay_order", T0 + 30, S).verdict == "probe"
    probing = claimed(opened, "token-1", T0 + 30)
    verdict, reason, _ = admit(probing, "pay_order", T0 + 31, S)
    assert probing.state == "half_open" and verdict == "refuse"
    assert "a probe call is checking whether it is back" in reason


def test_a_probes_success_closes_it_and_its_failure_opens_it_again() -> None:
    probing = claimed(failed_times([T0, T0, T0]), "token-1", T0 + 30)
    closed = recorded(probing, None, 0.1, T0 + 31, S)
    assert closed.state == "closed" and closed.failures == [] and closed.probe == ""
    reopened = recorded(probing, "still down", 0.1, T0 + 31, S)
    assert reopened.state == "open" and reopened.opened_at == T0 + 31
    assert admit(reopened, "pay_order", T0 + 32, S).verdict == "refuse"


def test_a_probe_that_never_reports_is_replaced_after_another_cool_down() -> None:
    probing = claimed(failed_times([T0, T0, T0]), "dead-worker", T0 + 30)
    assert admit(probing, "pay_order", T0 + 59, S).verdict == "refuse"
    assert admit(probing, "pay_order", T0 + 60, S).verdict == "probe"


# --- the loop with a store ----------------------------------------------------------------------
class Flaky:
    """A tool that fails transiently while ``down``, and counts its calls."""

    def __init__(self) -> None:
        self.down = True
        self.calls = 0

        @tool
        def lookup(key: str) -> str:
            """Look a key up."""
            self.calls += 1
            if self.down:
                raise TransientToolError("HTTP 503 from the lookup service")
            return f"{key}: found"

        self.tool = lookup


CALL = 'Thought: look it up\nAction: lookup\nAction Input: {"key": "k1"}'
DONE = "Thought: done\nFinal Answer: finished"


def worker(store: Any, flaky: Flaky, replies: list[str], **settings: Any) -> Any:
    """One graph, as another worker would build it: its own registry and model, the store."""
    values = {"health_failures": 3, "tool_attempts": 3, "retry_base_delay": 0, **settings}
    return build_graph(
        AgentSettings(**values),
        model=ScriptedChatModel(responses=replies),
        registry=ToolRegistry([flaky.tool]),
        store=store,
        sleep=lambda _: None,
    )


def tool_results(trace: list[Any]) -> list[dict[str, Any]]:
    return [e["detail"] for e in trace if e["event"] == "tool_call"]


@pytest.fixture
def outage() -> Iterator[tuple[InMemoryStore, Flaky]]:
    """A store on which one run has seen ``lookup`` fail three times (its retries)."""
    store, flaky = InMemoryStore(), Flaky()
    run_traced(worker(store, flaky, [CALL, DONE]), {"task": "t"})
    assert flaky.calls == 3
    yield store, flaky


def test_an_outage_seen_by_one_run_pauses_the_tool_for_another(
    outage: tuple[InMemoryStore, Flaky],
) -> None:
    store, _ = outage
    assert store.get(NAMESPACE, "lookup").value["state"] == "open"
    other = Flaky()  # another worker's copy of the tool, healthy: it must not be called
    other.down = False
    state, trace = run_traced(worker(store, other, [CALL, DONE]), {"task": "t"})
    assert other.calls == 0
    [refused] = tool_results(trace)
    assert refused["status"] == "error" and refused["meta"]["error_type"] == "refused"
    assert refused["observation"].startswith("lookup is paused and was not called")
    assert state["status"] == "completed"  # the model saw the error and finished


def test_after_the_cool_down_a_probe_runs_and_its_success_resumes_the_tool(
    outage: tuple[InMemoryStore, Flaky],
) -> None:
    store, flaky = outage
    flaky.down = False
    graph = worker(store, flaky, [CALL, DONE])
    run_traced(graph, {"task": "t"}, context={"health_cooldown": 0})
    assert flaky.calls == 4  # the probe ran
    record = store.get(NAMESPACE, "lookup").value
    assert record["state"] == "closed" and record["failures"] == []


def test_a_failed_probe_pauses_it_again(outage: tuple[InMemoryStore, Flaky]) -> None:
    store, flaky = outage
    graph = worker(store, flaky, [CALL, DONE])
    run_traced(graph, {"task": "t"}, context={"health_cooldown": 0, "tool_attempts": 1})
    assert flaky.calls == 4
    assert store.get(NAMESPACE, "lookup").value["state"] == "open"


def test_the_async_loop_shares_the_same_health(outage: tuple[InMemoryStore, Flaky]) -> None:
    store, _ = outage
    other = Flaky()
    graph = worker(store, other, [CALL, DONE])
    state = asyncio.run(graph.ainvoke({"task": "t"}))
    assert other.calls == 0
    assert state["tool_buffer"][-1]["result"]["meta"]["error_type"] == "refused"


def test_without_a_store_every_run_calls_the_tool_as_before() -> None:
    flaky = Flaky()
    for _ in range(2):
        run_traced(worker(None, flaky, [CALL, DONE]), {"task": "t"})
    assert flaky.calls == 6


def test_bad_arguments_and_a_bad_record_do_not_pause_a_tool() -> None:
    store, flaky = InMemoryStore(), Flaky()
    flaky.down = False
    store.put(NAMESPACE, "lookup", {"state": "exploded", "failures": "many"})  # not a record
    bad = 'Thought: x\nAction: lookup\nAction Input: {"nope": 1}'
    run_traced(worker(store, flaky, [bad, bad, CALL, DONE], health_failures=1), {"task": "t"})
    assert flaky.calls == 1
    assert store.get(NAMESPACE, "lookup").value["state"] == "closed"


def test_retries_of_an_admitted_call_are_not_refused() -> None:
    store, flaky = InMemoryStore(), Flaky()
    run_traced(worker(store, flaky, [CALL, DONE], health_failures=1), {"task": "t"})
    assert flaky.calls == 3  # opened at the first attempt; the call's retries still ran


def test_the_replay_of_an_unknown_payment_is_never_refused() -> None:
    """Three timeouts after the charge open the breaker on pay_order; the replay that settles
    the payment still runs, so the run knows it paid, once."""
    store = InMemoryStore()
    with World.temporary() as world:
        timeouts = fail_first(3, Fault.timeout(10, after_effect=True))
        world.set_faults({"api.create_payment": timeouts})
        replies = [*SEED_FLOW_REPLIES[:3], "Thought: it failed\nFinal Answer: payment failed"]
        replies.append("Thought: the replay shows it\nFinal Answer: paid 2328.02")
        graph = build_graph(
            AgentSettings(approval_tools=[], retry_base_delay=0, health_failures=3),
            model=ScriptedChatModel(responses=replies),
            registry=world.registry(timeout=0.2),
            store=store,
        )
        state, _ = run_traced(graph, {"task": SEED_TASK})
        charges = [p for p in world.payments() if p["order_id"] == "ORD-2024-001"]
    assert len(charges) == 1
    assert state["status"] == "completed" and state["answer"] == "paid 2328.02"
    assert store.get(NAMESPACE, "pay_order").value["state"] == "closed"


# --- a store that misbehaves: local behaviour, a warning, never a crash or a second call -------
class BrokenStore(InMemoryStore):
    """A shared store whose reads, or writes, fail as a store that is down does."""

    def __init__(self, failing: str) -> None:
        super().__init__()
        self.failing = failing

    def get(self, *args: Any, **kwargs: Any) -> Any:
        if self.failing == "reads":
            raise ConnectionError("store unreachable")
        return super().get(*args, **kwargs)

    def put(self, *args: Any, **kwargs: Any) -> None:
        if self.failing in ("reads", "writes"):
            raise ConnectionError("store unreachable")
        super().put(*args, **kwargs)


@pytest.mark.parametrize("failing", ["reads", "writes"])
@pytest.mark.parametrize("run", ["sync", "async"])
def test_a_failing_store_leaves_the_call_to_run_once_with_a_warning(
    failing: str, run: str, caplog: pytest.LogCaptureFixture
) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    flaky = Flaky()
    flaky.down = False
    graph = build_graph(
        AgentSettings(health_failures=1),
        model=ScriptedChatModel(responses=[CALL, DONE]),
        registry=ToolRegistry([flaky.tool]),
        store=BrokenStore(failing),
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "t"}}
    if run == "sync":
        state = graph.invoke({"task": "t"}, config)
    else:
        state = asyncio.run(graph.ainvoke({"task": "t"}, config))
    assert state["status"] == "completed" and flaky.calls == 1
    assert graph.invoke(None, config)["status"] == "completed" and flaky.calls == 1
    meta = state["tool_buffer"][-1]["result"]["meta"]
    assert meta["health_store"].startswith("tool health store failed, skipped: ConnectionError")
    assert "tool health store failed" in caplog.text


def record_at(values: dict[str, Any]) -> Any:
    from datetime import UTC, datetime

    from langgraph.store.base import Item

    now = datetime.now(UTC)
    return Item(value=values, key="t", namespace=NAMESPACE, created_at=now, updated_at=now)


def opened(at: float, **fields: Any) -> dict[str, Any]:
    return {"state": "open", "failures": [at], "opened_at": at, **fields}


@pytest.mark.parametrize(
    "values",
    [
        opened(T0 + 3600),  # written by a worker whose clock is an hour ahead
        opened(float("nan")),
        opened(float("inf")),
        opened(1e308),
        opened(T0, failures=[T0, float("nan")]),
        {"state": "closed", "failures": [1e308, 1e308], "latency_s": float("inf")},
    ],
)
def test_a_skewed_or_absurd_record_is_no_record(values: dict[str, Any]) -> None:
    health = read(record_at(values))
    assert admit(health, "pay_order", T0, S).verdict == "allow"
    after = recorded(health, "TransientToolError: HTTP 503", 0.1, T0, S)
    assert after.state == "closed" and after.failures == [T0]  # counted afresh


def test_a_record_from_a_clock_a_little_ahead_pauses_no_longer_than_the_cool_down() -> None:
    verdict, reason, wait = admit(read(record_at(opened(T0 + 20))), "pay_order", T0, S)
    assert verdict == "refuse" and wait == S.health_cooldown
    assert "tried again in 30 s" in reason


FLOATS = st.floats(allow_nan=True, allow_infinity=True) | st.floats(-1e4, 1e4).map(T0.__add__)
RECORDS = st.fixed_dictionaries(
    {
        "state": st.sampled_from(["closed", "open", "half_open"]),
        "failures": st.lists(FLOATS, max_size=5),
        "opened_at": FLOATS,
        "probe": st.sampled_from(["", "p1"]),
    }
)


@given(values=RECORDS, now=st.floats(T0 - 1e4, T0 + 1e4), cooldown=st.floats(0, 1e4))
def test_no_record_pauses_a_tool_past_a_cool_down_from_now(
    values: dict[str, Any], now: float, cooldown: float
) -> None:
    settings = S.with_overrides({"health_cooldown": cooldown})
    health = read(record_at(values))
    admission = admit(health, "pay_order", now, settings)
    if admission.verdict == "refuse":
        assert 0 < admission.wait <= cooldown
        if max([health.opened_at, *health.failures]) <= now:  # written by a clock not ahead
            later = now + cooldown + 1e-3
            assert admit(health, "pay_order", later, settings).verdict != "refuse"
    if not all(math.isfinite(t) for t in [values["opened_at"], *values["failures"]]):
        assert health == ToolHealth()
    after = recorded(health, "HTTP 503", 0.1, now, settings)
    assert read(record_at(after.model_dump())) == after  # what is written reads back
