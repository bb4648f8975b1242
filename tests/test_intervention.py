"""Approval gates, cancellation, saved runs: an operator's hands on the loop."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from tether import AgentSettings, build_graph, tool
from tether.agent import Agent, UnknownRunError
from tether.control.approval import ApprovalError, parse_decision
from tether.control.store import RunStore, open_run_store
from tether.testing import ScriptedChatModel
from tether.tools.registry import ToolRegistry
from tether_cli.console import TracePrinter
from tether_world import World
from tether_world.demo import SEED_FLOW_REPLIES, SEED_TASK

from tests.scripts import act, final

APPROVE = {"decisions": [{"type": "approve"}]}


def edit(args: dict[str, Any], name: str = "pay_order") -> dict[str, Any]:
    return {"decisions": [{"type": "edit", "edited_action": {"name": name, "args": args}}]}


@pytest.fixture
def world() -> Iterator[World]:
    with World.temporary() as w:
        yield w


@pytest.fixture
def store(tmp_path: Path) -> Iterator[RunStore]:
    with open_run_store(tmp_path / "runs.sqlite") as s:
        yield s


def seed_payments(world: World) -> list[dict[str, Any]]:
    return [p for p in world.payments() if p["order_id"] == "ORD-2024-001"]


def seed_agent(world: World, store: RunStore, replies: list[str] | None = None) -> Agent:
    model = ScriptedChatModel(responses=list(replies or SEED_FLOW_REPLIES))
    return Agent(AgentSettings(), store=store, registry=world.registry(), model=model)


def test_side_effecting_call_pauses_and_approval_runs_it(world: World, store: RunStore) -> None:
    agent = seed_agent(world, store)
    paused = agent.run(SEED_TASK, thread_id="t1")
    assert paused.pending is not None
    action = paused.pending["action_requests"][0]
    assert action["name"] == "pay_order"
    assert action["args"] == {"order_id": "ORD-2024-001", "amount": "2328.02"}
    assert seed_payments(world) == []  # nothing paid while waiting
    done = agent.resume("t1", APPROVE)
    assert done.status == "completed"
    assert len(seed_payments(world)) == 1


def test_edit_is_validated_before_it_touches_the_saved_run(world: World, store: RunStore) -> None:
    agent = seed_agent(world, store)
    agent.run(SEED_TASK, thread_id="t2")
    before = agent.show("t2")
    with pytest.raises(ApprovalError, match="amount"):
        agent.resume("t2", edit({"order_id": "ORD-2024-001"}))
    assert agent.show("t2") == before  # untouched: still waiting, same steps
    # A valid edit replaces the arguments; the API refuses the wrong amount, the model sees it.
    edited = {"order_id": "ORD-2024-001", "amount": "2000.00"}
    result = agent.resume("t2", edit(edited))
    assert result.state["tool_buffer"][-1]["arguments"] == edited
    assert result.state["tool_buffer"][-1]["result"]["status"] == "error"
    assert seed_payments(world) == []


def test_reject_goes_back_to_the_model_as_an_observation(world: World, store: RunStore) -> None:
    replies = [*SEED_FLOW_REPLIES[:3], final("payment was rejected, not paid")]
    model = ScriptedChatModel(responses=replies)
    agent = Agent(AgentSettings(), store=store, registry=world.registry(), model=model)
    agent.run(SEED_TASK, thread_id="t3")
    rejection = {"decisions": [{"type": "reject", "message": "amount looks wrong"}]}
    result = agent.resume("t3", rejection)
    assert result.status == "completed"
    last_prompt = "\n".join(m.text for m in model.calls[-1].messages)
    assert "The operator rejected this call: amount looks wrong" in last_prompt
    assert result.state["history"][2]["kind"] == "rejected"
    assert seed_payments(world) == []


def test_unusable_answers_are_refused(world: World, store: RunStore) -> None:
    agent = seed_agent(world, store)
    agent.run(SEED_TASK, thread_id="t4")
    unusable: list[Any] = [
        None,
        "approve",  # tether's old protocol is gone
        True,
        {"action": "approve"},
        {"decisions": []},
        {"decisions": [{"type": "approve"}, {"type": "approve"}]},
        {"decisions": [{"type": "respond", "message": "done"}]},  # not allowed here
        {"decisions": [{"type": "edit"}]},
        {"decisions": [{"type": "reject", "message": 7}]},
        {"decisions": "approve"},
        edit({"order_id": "ORD-2024-001", "amount": "1.00"}, name="refund_payment"),
        edit({"order_id": "ORD-2024-001", "amount": "2328.02", "x": 2**64}),
    ]
    for answer in unusable:
        with pytest.raises(ApprovalError):
            agent.resume("t4", answer)
    pending = agent.show("t4")["pending_approval"]
    assert pending["action_requests"][0]["name"] == "pay_order"
    assert seed_payments(world) == []


def test_unknown_thread_is_a_clear_error(store: RunStore) -> None:
    agent = Agent(AgentSettings(), store=store, model=ScriptedChatModel(responses=[]))
    with pytest.raises(UnknownRunError, match="no saved run with thread id 'nope'"):
        agent.resume("nope")
    with pytest.raises(UnknownRunError):
        agent.cancel("nope")


# A thread id alone does not make a run resumable (LangGraph reports it to nodes all the same).
@pytest.mark.parametrize("config", [None, {"configurable": {"thread_id": "t"}}])
def test_gate_without_a_checkpointer_fails_closed(world: World, config: Any) -> None:
    model = ScriptedChatModel(responses=list(SEED_FLOW_REPLIES))
    graph = build_graph(AgentSettings(), model=model, registry=world.registry())
    with pytest.raises(ApprovalError, match="no checkpointer"):
        graph.invoke({"task": SEED_TASK}, config)
    assert seed_payments(world) == []


def test_approval_tools_setting_names_the_gated_tools(store: RunStore) -> None:
    @tool
    def lookup(key: str) -> str:
        """Read only."""
        return key

    model = ScriptedChatModel(responses=[act("lookup", '{"key": "a"}'), final("a")])
    agent = Agent(
        AgentSettings(approval_tools=["lookup"]),
        store=store,
        registry=ToolRegistry([lookup]),
        model=model,
    )
    assert agent.run("t", thread_id="t5").pending is not None


def test_cancel_from_another_process_stops_before_the_next_call(
    world: World, store: RunStore, tmp_path: Path
) -> None:
    @tool
    def slow_step(key: str) -> str:
        """While this runs, an operator elsewhere cancels the run."""
        with open_run_store(tmp_path / "runs.sqlite") as other:  # a second connection
            other.cancels.request("t6", "operator pressed stop")
        return "done"

    model = ScriptedChatModel(responses=[act("slow_step", '{"key": "a"}'), final("never")])
    agent = Agent(AgentSettings(), store=store, registry=ToolRegistry([slow_step]), model=model)
    result = agent.run("work", thread_id="t6")
    assert result.status == "cancelled" and result.cause == "cancel"
    assert "operator pressed stop" in result.state["reason"]
    assert len(model.calls) == 1


def test_runs_list_and_show(world: World, store: RunStore) -> None:
    agent = seed_agent(world, store)
    agent.run(SEED_TASK, thread_id="t7")
    agent.resume("t7", APPROVE)
    summary = next(r for r in agent.runs() if r.thread_id == "t7")
    assert summary.status == "completed" and summary.steps == 4
    assert summary.total_tokens > 0
    shown = agent.show("t7")
    assert [s["proposal"] for s in shown["steps"]] == [
        "query_order",
        "compute_discount",
        "pay_order",
        "final",
    ]
    assert shown["steps"][2]["approval"] == "approve"
    assert shown["usage"]["total_tokens"] == summary.total_tokens


def test_budget_can_change_for_a_resumed_run(world: World, store: RunStore) -> None:
    agent = seed_agent(world, store)
    paused = agent.run(SEED_TASK, thread_id="t8")
    spent = paused.state["usage"]["total_tokens"]
    result = agent.resume("t8", APPROVE, context={"token_budget": spent + 10})
    assert result.status == "partial"
    assert f"token budget {spent + 10}" in result.state["reason"]


def test_a_rejected_call_proposed_again_is_refused_as_rejected(
    world: World, store: RunStore
) -> None:
    replies = [*SEED_FLOW_REPLIES[:3], SEED_FLOW_REPLIES[2], final("not paid")]
    model = ScriptedChatModel(responses=replies)
    agent = Agent(AgentSettings(), store=store, registry=world.registry(), model=model)
    agent.run(SEED_TASK, thread_id="t5")
    result = agent.resume("t5", {"decisions": [{"type": "reject", "message": "no"}]})
    assert result.status == "completed"  # refused without a second pause
    last_prompt = "\n".join(m.text for m in model.calls[-1].messages)
    assert "was rejected by the operator last time" in last_prompt
    assert "failed on its last two runs" not in last_prompt
    assert seed_payments(world) == []
    (refused,) = [e for e in agent.trace("t5") if e["event"] == "refused"]
    told = io.StringIO()
    TracePrinter(Console(file=told, width=200)).event(refused)
    assert "refused pay_order: this exact call was rejected by the operator" in told.getvalue()


def stored_bytes(path: Path) -> int:
    """What every table of a SQLite run store holds, in bytes."""
    import sqlite3

    with sqlite3.connect(path) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        total = 0
        for table in tables:
            columns = [r[1] for r in db.execute(f"PRAGMA table_info('{table}')")]
            lengths = " + ".join(f"COALESCE(LENGTH({c}), 0)" for c in columns)
            total += db.execute(f"SELECT COALESCE(SUM({lengths}), 0) FROM '{table}'").fetchone()[0]
    return total


def test_a_long_rejection_message_is_cut_before_it_is_saved(
    world: World, store: RunStore, tmp_path: Path
) -> None:
    replies = [*SEED_FLOW_REPLIES[:3], final("not paid")]
    agent = seed_agent(world, store, replies)
    agent.run(SEED_TASK, thread_id="t10")
    before = stored_bytes(tmp_path / "runs.sqlite")
    rejection = {"decisions": [{"type": "reject", "message": "no " * 700_000}]}  # 2.1 MB
    result = agent.resume("t10", rejection)
    assert result.status == "completed"
    grown = stored_bytes(tmp_path / "runs.sqlite") - before
    assert grown < 100_000, grown
    assert "…[cut " in result.state["tool_buffer"][-1]["result"]["message"]


def test_a_trace_table_from_before_supersteps_is_upgraded(world: World, tmp_path: Path) -> None:
    import sqlite3

    with sqlite3.connect(tmp_path / "old.sqlite") as db:
        db.execute(
            "CREATE TABLE tether_trace (id INTEGER PRIMARY KEY, thread_id VARCHAR(200) NOT NULL,"
            " step INTEGER NOT NULL, event VARCHAR(40) NOT NULL, detail TEXT NOT NULL)"
        )
        db.execute("INSERT INTO tether_trace VALUES (1, 'old', 0, 'start', '{}')")
    with open_run_store(tmp_path / "old.sqlite") as old:
        agent = seed_agent(world, old)
        agent.run(SEED_TASK, thread_id="new")
        assert agent.trace("old") == [{"step": 0, "event": "start", "detail": {}}]
        assert [e["event"] for e in agent.trace("new")][:2] == ["start", "model_call"]


def store_file_bytes(path: Path) -> int:
    """The size of the run store's file, its write-ahead log moved into it first."""
    import sqlite3

    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path.stat().st_size


def saved_answers(store: RunStore, thread: str) -> list[Any]:
    """Every resume value LangGraph saved for ``thread``, as it reads them back."""
    config: Any = {"configurable": {"thread_id": thread}}
    found = []
    for item in store.checkpointer.list(config):
        for task_id, channel, value in item.pending_writes or []:
            if channel == "__resume__":
                found += value if task_id != "00000000-0000-0000-0000-000000000000" else [value]
    return found


def test_a_long_answer_through_command_resume_is_kept_as_the_decision_read(
    world: World, store: RunStore, tmp_path: Path
) -> None:
    """LangGraph saves a resume value as it came, twice (the Command's write and the task's),
    before the node reads it: a 2 MB rejection grew the store by about 4 MB through
    ``graph.invoke(Command(resume=...))``. It keeps the decision read from it instead."""
    from langgraph.types import Command

    model = ScriptedChatModel(responses=[*SEED_FLOW_REPLIES[:3], final("not paid")])
    graph = build_graph(
        AgentSettings(), model=model, registry=world.registry(), checkpointer=store.checkpointer
    )
    config: Any = {"configurable": {"thread_id": "t11"}}
    assert "__interrupt__" in graph.invoke({"task": SEED_TASK}, config)
    path = tmp_path / "runs.sqlite"
    before = store_file_bytes(path)
    rejection = {"decisions": [{"type": "reject", "message": "no " * 700_000}]}  # 2.1 MB
    done = graph.invoke(Command(resume=rejection), config)
    assert store_file_bytes(path) - before < 100_000
    assert done["status"] == "completed" and seed_payments(world) == []
    told = done["tool_buffer"][-1]["result"]["message"]
    assert told.startswith("The operator rejected this call: no no") and "…[cut " in told
    assert done["history"][-2]["kind"] == "rejected"
    for kept in saved_answers(store, "t11"):  # read back after a crash: the same decision
        assert parse_decision(kept, "pay_order")["message"] in told


def test_an_edit_too_long_to_keep_is_refused_and_the_run_asks_again(
    world: World, store: RunStore, tmp_path: Path
) -> None:
    from langgraph.types import Command

    model = ScriptedChatModel(responses=list(SEED_FLOW_REPLIES[:3]))
    graph = build_graph(
        AgentSettings(), model=model, registry=world.registry(), checkpointer=store.checkpointer
    )
    config: Any = {"configurable": {"thread_id": "t12"}}
    graph.invoke({"task": SEED_TASK}, config)
    before = store_file_bytes(tmp_path / "runs.sqlite")
    long_edit = edit({"order_id": "ORD-2024-001", "amount": "1" + "0" * 2_000_000})
    asked = graph.invoke(Command(resume=long_edit), config)["__interrupt__"][0].value
    assert "a run keeps 20,000" in asked["action_requests"][0]["description"]
    assert store_file_bytes(tmp_path / "runs.sqlite") - before < 100_000
    assert seed_payments(world) == []
    with pytest.raises(ApprovalError, match="a run keeps 20,000"):
        Agent(AgentSettings(), store=store, registry=world.registry()).resume("t12", long_edit)
