"""Runs the seed flow and kills its own process at a chosen point (used by test_resume)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from tether import AgentSettings
from tether.agent import Agent
from tether.control.store import open_run_store
from tether.testing import ScriptedChatModel
from tether_world import World
from tether_world.demo import SEED_FLOW_REPLIES, SEED_TASK

CRASH_EXIT = 17


class DyingModel(ScriptedChatModel):
    """Dies (like a killed process, no cleanup) when asked for reply number ``die_at``."""

    die_at: int = 0

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
        if len(self.calls) + 1 == self.die_at:
            os._exit(CRASH_EXIT)
        return super()._generate(messages, stop, run_manager, **kw)


def die_after_payment(state: Any, result: Any, settings: Any) -> None:
    """A rule that kills the process right after the charge, before the step is saved."""
    if result and result["status"] == "success" and "idempotency_key" in str(result["data"]):
        os._exit(CRASH_EXIT)


def die_before_the_final_checkpoint(saver: Any) -> None:
    """Kill the process once the last node's writes are saved, before the checkpoint that
    holds the run's final status is."""
    put = saver.put

    def dying_put(config: Any, checkpoint: Any, metadata: Any, versions: Any) -> Any:
        if checkpoint["channel_values"].get("status", "running") != "running":
            os._exit(CRASH_EXIT)
        return put(config, checkpoint, metadata, versions)

    saver.put = dying_put


def main(store_path: str, world_dir: str, crash_point: str) -> None:
    world = World.create(Path(world_dir))
    rules = (die_after_payment,) if crash_point == "after_charge" else ()
    die_at = 4 if crash_point == "between_steps" else 0
    model = DyingModel(responses=list(SEED_FLOW_REPLIES), die_at=die_at)
    store = open_run_store(store_path)
    if crash_point == "before_final_checkpoint":
        die_before_the_final_checkpoint(store.checkpointer)
    agent = Agent(
        AgentSettings(approval_tools=[]),
        store=store,
        registry=world.registry(),
        model=model,
        rules=rules,
    )
    agent.run(SEED_TASK, thread_id="crash")
    sys.exit(0)  # not reached when the crash happens


if __name__ == "__main__":
    main(*sys.argv[1:4])
