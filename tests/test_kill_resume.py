"""SIGKILL at random points of a saved run, then resume: every run reaches a terminal status,
the payment is taken exactly once, no run is left unresumable, and the trace holds each step's
events once. ``SOAK_KILLS`` raises the count (``make soak``)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tether import AgentSettings
from tether.agent import Agent, UnknownRunError
from tether.control.store import open_run_store
from tether_world import World
from tether_world.demo import SEED_TASK

from tests import forked
from tests.flows import flow_model

KILLS = int(os.environ.get("SOAK_KILLS", "3"))
RUN_SECONDS = 1.5  # the flow's length with a 50 ms model, so kills land all along it


@pytest.mark.timeout(120)
@pytest.mark.parametrize("seed", range(KILLS))
def test_a_killed_run_resumes_and_pays_exactly_once(tmp_path: Path, seed: int) -> None:
    store_path, world_dir = tmp_path / "runs.sqlite", tmp_path / "world"
    World.create(world_dir).close()
    worker = forked.Worker("tests.kill_worker", str(store_path), str(world_dir))
    assert worker.readline().strip() == "ready"
    try:
        worker.wait(timeout=random.Random(seed).uniform(0, RUN_SECONDS))
    except subprocess.TimeoutExpired:
        worker.send_signal(signal.SIGKILL)
        worker.wait()

    result, _, charges = resumed(store_path, world_dir)
    assert result.status == "completed", result.state.get("reason")
    assert charges == 1


def resumed(store_path: Path, world_dir: Path) -> tuple[Any, list[tuple[int, str]], int]:
    """Resume the killed run: its result, its trace as (step, event) and the charges."""
    world = World.create(world_dir)
    with open_run_store(store_path) as store:
        agent = Agent(
            AgentSettings(approval_tools=[], token_budget=60_000),
            store=store,
            registry=world.registry(),
            model=flow_model(),
        )
        try:
            result = agent.resume("killed")
        except UnknownRunError:  # killed before the first checkpoint: nothing to resume
            result = agent.run(SEED_TASK, thread_id="killed")
        trace = [(e["step"], e["event"]) for e in agent.trace("killed")]
    charges = [p for p in world.payments() if p["order_id"] == "ORD-2024-001"]
    world.close()
    return result, trace, len(charges)


@pytest.fixture(scope="module")
def unbroken_trace(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[int, str]]:
    """The trace of the same flow run through without a kill."""
    where = tmp_path_factory.mktemp("unbroken")
    World.create(where / "world").close()
    _, trace, _ = resumed(where / "runs.sqlite", where / "world")
    return trace


@pytest.mark.timeout(120)
@pytest.mark.parametrize("nth", [1, 2, 3, 5, 7, 8])
@pytest.mark.parametrize("when", ["before", "after"])
def test_a_kill_around_a_nodes_writes_keeps_each_trace_event_once(
    tmp_path: Path, unbroken_trace: list[tuple[int, str]], when: str, nth: int
) -> None:
    """A node's events are in the trace exactly once, whether the process died just before its
    writes were saved (the node runs again on resume) or just after (it does not)."""
    store_path, world_dir = tmp_path / "runs.sqlite", tmp_path / "world"
    World.create(world_dir).close()
    args = [str(store_path), str(world_dir), when, str(nth)]
    worker = forked.run("tests.kill_worker", *args, timeout=100)
    assert worker.returncode == -signal.SIGKILL, worker.stderr[-2000:]
    result, trace, charged = resumed(store_path, world_dir)
    assert result.status == "completed" and charged == 1
    assert trace == unbroken_trace
