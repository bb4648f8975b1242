"""A run survives its process dying: resume from the last saved step, pay exactly once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tether import AgentSettings
from tether.agent import Agent
from tether.control.store import open_run_store
from tether.testing import ScriptedChatModel
from tether_world import World
from tether_world.demo import SEED_FLOW_REPLIES

from tests import forked
from tests.crash_worker import CRASH_EXIT

ROOT = Path(__file__).parent.parent


def crash(tmp_path: Path, crash_point: str) -> tuple[Path, Path]:
    """Run the crash worker to ``crash_point``; the store's and the world's paths."""
    store_path, world_dir = tmp_path / "runs.sqlite", tmp_path / "world"
    World.create(world_dir).close()  # seed it once
    worker = forked.run(
        "tests.crash_worker",
        str(store_path),
        str(world_dir),
        crash_point,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert worker.returncode == CRASH_EXIT, worker.stderr[-2000:]
    return store_path, world_dir


def test_a_run_killed_before_its_final_checkpoint_is_listed_as_it_ended(tmp_path: Path) -> None:
    """The last node's writes are saved, the checkpoint after it is not: the run has ended
    (resume has nothing to run), and the list says so."""
    store_path, _ = crash(tmp_path, "before_final_checkpoint")
    with open_run_store(store_path) as store:
        agent = Agent(AgentSettings(approval_tools=[]), store=store)
        (summary,) = agent.runs()
        status = agent.status("crash")
    assert status.status == "completed"
    assert (summary.status, summary.waiting_for) == ("completed", None)
    assert summary.steps == 4 and summary.reason == status.reason
    assert summary.total_tokens == status.usage["total_tokens"]


@pytest.mark.parametrize(
    ("crash_point", "replies_left"),
    [("between_steps", 1), ("after_charge", 1)],
)
def test_resume_after_the_process_died(tmp_path: Path, crash_point: str, replies_left: int) -> None:
    store_path, world_dir = crash(tmp_path, crash_point)
    with World.create(world_dir) as world, open_run_store(store_path) as store:
        charged = [p for p in world.payments() if p["order_id"] == "ORD-2024-001"]
        assert len(charged) == 1  # the worker paid before it died
        model = ScriptedChatModel(responses=list(SEED_FLOW_REPLIES[-replies_left:]))
        agent = Agent(
            AgentSettings(approval_tools=[]), store=store, registry=world.registry(), model=model
        )
        assert agent.runs()[0].status == "running"
        result = agent.resume("crash")
        assert result.status == "completed", result.state.get("reason")
        assert len(model.calls) == replies_left  # earlier steps were not repeated
        paid = [p for p in world.payments() if p["order_id"] == "ORD-2024-001"]
        assert len(paid) == 1  # resuming did not charge again
        assert result.state["steps"] == 4
