"""Runs the seed flow on a prompt-driven model, saved step by step, until the test kills it,
or (given a point) until it kills itself there: ``before`` or ``after`` the ``n``-th node's
writes reach the run store."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from tether import AgentSettings
from tether.agent import Agent
from tether.control.store import RunStore, open_run_store
from tether_world import World
from tether_world.demo import SEED_TASK

from tests.flows import flow_model

LAG = 0.3
"""How long the slow side waits, so the other side of the race surely goes first."""


def die_at_writes(store: RunStore, when: str, nth: int) -> None:
    """SIGKILL this process just before or just after the ``nth`` saving of a node's writes.

    The writes and the trace go to the store on different paths; here the other one is made
    slow, so it has surely run by the kill (``before``: the trace; ``after``: the writes).
    ``after`` slows the trace's appends from the ``nth - 1``-th writes on: the ``nth`` node's
    events exist only once that node has run, so after the writes before it were handed to
    the saver; slowing the appends before that made the run longer and nothing else."""
    saver: Any = store.checkpointer
    put_writes, calls = saver.put_writes, [0]
    if when == "after":
        append = store.trace.append

        def slow_append(*args: Any, **kwargs: Any) -> Any:
            if calls[0] >= nth - 1:
                time.sleep(LAG)
            return append(*args, **kwargs)

        store.trace.append = slow_append  # type: ignore[method-assign]

    def dying(config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        calls[0] += 1
        if calls[0] == nth and when == "before":
            time.sleep(LAG)
            os.kill(os.getpid(), signal.SIGKILL)
        put_writes(config, writes, task_id, task_path)
        if calls[0] == nth and when == "after":
            os.kill(os.getpid(), signal.SIGKILL)

    saver.put_writes = dying


def main(store_path: str, world_dir: str, when: str = "", nth: str = "0") -> None:
    world = World.create(Path(world_dir))
    store = open_run_store(store_path)
    if when:
        die_at_writes(store, when, int(nth))
    agent = Agent(
        AgentSettings(approval_tools=[], token_budget=60_000),
        store=store,
        registry=world.registry(),
        model=flow_model(latency=0.05),
    )
    print("ready", flush=True)
    agent.run(SEED_TASK, thread_id="killed")


if __name__ == "__main__":
    main(*sys.argv[1:5])
