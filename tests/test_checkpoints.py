"""Checkpoints stay lean: a step adds as many bytes late in a run as early, because the
buffers, the step records and the call memory are stored as each step's new entry, not
copied whole into every checkpoint; and loading a checkpoint rebuilds them exactly."""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from langgraph.checkpoint.sqlite import SqliteSaver
from tether import AgentSettings, ToolRegistry, build_graph
from tether.state import (
    CALLS_KEPT,
    keep_window,
    keep_windows,
    record_call_batches,
    record_calls,
    windowed,
)
from tether.testing import ScriptedChatModel

from tests.scripts import act, final, lookup

STEPS = 14  # 13 tool calls, then an answer: the windows fill well before the end
SETTINGS = AgentSettings(approval_tools=[], max_steps=STEPS + 5, token_budget=10**7)
CONFIG: Any = {"configurable": {"thread_id": "lean"}}
REMEMBERED = ("reasoning_buffer", "tool_buffer", "history", "calls")


@pytest.fixture
def saver(tmp_path: Path) -> Iterator[SqliteSaver]:
    conn = sqlite3.connect(str(tmp_path / "runs.sqlite"), check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    yield saver
    conn.close()


def graph(saver: SqliteSaver, replies: list[str]) -> Any:
    model = ScriptedChatModel(responses=replies)
    return build_graph(SETTINGS, model=model, registry=ToolRegistry([lookup]), checkpointer=saver)


def replies() -> list[str]:
    return [*(act("lookup", f'{{"key": "k{i}"}}') for i in range(STEPS - 1)), final("done")]


def stored_bytes(saver: SqliteSaver) -> int:
    (checkpoints,) = saver.conn.execute(
        "SELECT SUM(LENGTH(checkpoint) + LENGTH(metadata)) FROM checkpoints"
    ).fetchone()
    (writes,) = saver.conn.execute("SELECT SUM(LENGTH(value)) FROM writes").fetchone()
    return int(checkpoints) + int(writes)


def run(saver: SqliteSaver) -> tuple[list[int], dict[str, Any]]:
    """Bytes stored after each tool step, and the run's final state as the loop held it."""
    sizes, last = [], {}
    chunks = graph(saver, replies()).stream(
        {"task": "look up k0 to k12"}, CONFIG, stream_mode=["updates", "values"], durability="sync"
    )
    for mode, chunk in chunks:
        if mode == "values":
            last = chunk
        elif "act" in chunk:
            sizes.append(stored_bytes(saver))
    return sizes, last


def test_a_step_adds_as_many_bytes_late_in_a_run_as_early(saver: SqliteSaver) -> None:
    sizes, state = run(saver)
    assert state["status"] == "completed"
    growth = [after - before for before, after in itertools.pairwise(sizes)]
    assert len(growth) == STEPS - 2
    # Copied whole, the full windows would add about 2 KB per step by the end (measured: 7.1
    # KB at step 2, 9.3 KB at step 13); the bytes left vary only with LangGraph's version ids.
    assert max(growth) - min(growth) < 300, growth


def test_loading_a_checkpoint_rebuilds_the_buffers_and_the_call_memory(
    saver: SqliteSaver,
) -> None:
    _, live = run(saver)
    loaded = graph(saver, []).get_state(CONFIG).values  # a fresh graph, as a resume has
    assert len(live["reasoning_buffer"]) == SETTINGS.reasoning_window
    assert len(live["tool_buffer"]) == SETTINGS.tool_window
    assert len(live["calls"]) == STEPS - 1 <= CALLS_KEPT
    assert {key: loaded[key] for key in REMEMBERED} == {key: live[key] for key in REMEMBERED}


def test_an_earlier_checkpoint_holds_its_own_step_s_buffers(saver: SqliteSaver) -> None:
    run(saver)
    history = graph(saver, []).get_state_history(CONFIG)
    after_act = [s for s in history if s.metadata and s.next == ("think",)]
    at_step_7 = next(s.values for s in after_act if s.values["steps"] == 7)
    assert [e["step"] for e in at_step_7["tool_buffer"]] == [5, 6, 7]
    assert [e["step"] for e in at_step_7["reasoning_buffer"]] == [2, 3, 4, 5, 6, 7]
    assert len(at_step_7["calls"]) == 7


WRITES = st.lists(st.one_of(st.integers(0, 9).map(lambda i: windowed([i], 3)), st.just([7])))
EVENTS = st.lists(
    st.fixed_dictionaries(
        {"key": st.sampled_from([f"k{i}" for i in range(CALLS_KEPT + 4)])},
        optional={"ran": st.just(True), "outcome": st.sampled_from(["success", "tool_error"])},
    ),
    max_size=6,
)


@given(WRITES, WRITES)
def test_the_buffer_reducer_gives_one_value_however_writes_are_batched(
    first: list[Any], then: list[Any]
) -> None:
    """What lets LangGraph replay stored writes in batches of its choosing."""
    one_by_one: list[Any] = []
    for write in [*first, *then]:
        one_by_one = keep_window(one_by_one, write)
    assert keep_windows(keep_windows([], first), then) == one_by_one
    assert keep_windows([], [*first, *then]) == one_by_one


# a call forgotten (the 17th distinct call came after it) and then made again
FORGOTTEN = [[{"key": f"k{i}", "ran": True} for i in range(CALLS_KEPT + 1)], [{"key": "k0"}]]


@given(st.lists(EVENTS, max_size=8), st.integers(0, 8))
@example(FORGOTTEN, 1)
def test_the_call_memory_gives_one_value_however_updates_are_batched(
    updates: list[Any], cut: int
) -> None:
    one_by_one: dict[str, Any] = {}
    for events in updates:
        one_by_one = record_calls(one_by_one, events)
    halves = record_call_batches(record_call_batches({}, updates[:cut]), updates[cut:])
    assert halves == record_call_batches({}, updates) == one_by_one
    assert len(one_by_one) <= CALLS_KEPT
