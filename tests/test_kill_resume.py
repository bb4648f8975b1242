"""SIGKILL at random points of a saved run, then resume: every run reaches a terminal status,
the payment is taken exactly once, and no run is left unresumable. ``SOAK_KILLS`` raises the
count (``make soak``)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from tether import AgentSettings
from tether.agent import Agent, UnknownRunError
from tether.control.store import open_run_store
from tether_world import World
from tether_world.demo import SEED_TASK

from tests.flows import flow_model

KILLS = int(os.environ.get("SOAK_KILLS", "3"))
ROOT = Path(__file__).parent.parent
RUN_SECONDS = 1.5  # the flow's length with a 50 ms model, so kills land all along it


@pytest.mark.timeout(120)
@pytest.mark.parametrize("seed", range(KILLS))
def test_a_killed_run_resumes_and_pays_exactly_once(tmp_path: Path, seed: int) -> None:
    store_path, world_dir = tmp_path / "runs.sqlite", tmp_path / "world"
    World.create(world_dir).close()
    worker = subprocess.Popen(
        [sys.executable, "-m", "tests.kill_worker", str(store_path), str(world_dir)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert worker.stdout is not None and worker.stdout.readline().strip() == "ready"
    try:
        worker.wait(timeout=random.Random(seed).uniform(0, RUN_SECONDS))
    except subprocess.TimeoutExpired:
        worker.send_signal(signal.SIGKILL)
        worker.wait()

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
    charges = [p for p in world.payments() if p["order_id"] == "ORD-2024-001"]
    world.close()
    assert result.status == "completed", result.state.get("reason")
    assert len(charges) == 1
