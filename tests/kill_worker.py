"""Runs the seed flow on a prompt-driven model, saved step by step, until the test kills it."""

from __future__ import annotations

import sys
from pathlib import Path

from tether import AgentSettings
from tether.agent import Agent
from tether.control.store import open_run_store
from tether_world import World
from tether_world.demo import SEED_TASK

from tests.flows import flow_model


def main(store_path: str, world_dir: str) -> None:
    world = World.create(Path(world_dir))
    agent = Agent(
        AgentSettings(approval_tools=[], token_budget=60_000),
        store=open_run_store(store_path),
        registry=world.registry(),
        model=flow_model(latency=0.05),
    )
    print("ready", flush=True)
    agent.run(SEED_TASK, thread_id="killed")


if __name__ == "__main__":
    main(*sys.argv[1:3])
