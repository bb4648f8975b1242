"""One worker of a fleet sharing PostgreSQL: the runs (LangGraph's PostgresSaver), the tool
health (LangGraph's PostgresStore) and the demo world, each worker with its own in-process
payment API over that world. It takes one action on one thread and prints one JSON line.

    python -m tests.fleet_worker URL ACTION THREAD [healthy|down|stall] [COOLDOWN]

ACTION: ``start`` (payments pause for approval), ``run`` (no approval gate), ``approve`` or
``resume`` (a saved run, in whatever worker saved it), ``setup`` (open the stores, nothing more).

``down``: every payment call answers 503. ``stall``: the first payment is charged, then its
answer never comes (the test kills the worker there).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from langgraph.store.postgres import PostgresStore
from tether import Agent, AgentSettings
from tether.control import open_run_store, setup_lock
from tether.dburl import libpq_url
from tether_world import World, fail_first
from tether_world.demo import SEED_TASK
from tether_world.faults import Fault

from tests.flows import flow_model

FAULTS = {
    "healthy": None,
    "down": {"api.create_payment": fail_first(10_000, Fault.error(503))},
    "stall": {"api.create_payment": fail_first(1, Fault.timeout(300, after_effect=True))},
}


def settings(cooldown: float, gated: bool) -> AgentSettings:
    return AgentSettings(
        approval_tools=None if gated else [],
        token_budget=60_000,
        retry_base_delay=0,
        health_failures=3,
        health_cooldown=cooldown,
    )


def act(agent: Agent, action: str, thread: str) -> Any:
    if action in ("start", "run"):
        return agent.run(SEED_TASK, thread_id=thread)
    if action == "approve":
        return agent.resume(thread, {"decisions": [{"type": "approve"}]})
    return agent.resume(thread)


def report(result: Any, agent: Agent, world: World) -> dict[str, Any]:
    calls = [e["detail"] for e in agent.trace(result.thread_id) if e["event"] == "tool_call"]
    return {
        "status": result.status,
        "pending": result.pending is not None,
        "reason": result.reason,
        "payment_api_calls": world.faults.calls("api.create_payment"),
        "pay_results": [
            {"status": c["status"], "meta": c["meta"], "observation": c["observation"]}
            for c in calls
            if c["tool"] == "pay_order"
        ],
    }


def setup(url: str) -> None:
    """The README's recipe up to its first run: the run store and LangGraph's store opened."""
    store = PostgresStore.from_conn_string(libpq_url(url))
    with open_run_store(url), store as health, setup_lock(url):
        health.setup()
    print("ready", flush=True)


def main(url: str, action: str, thread: str, faults: str = "healthy", cool: str = "300") -> None:
    if action == "setup":
        return setup(url)
    world = World.create(url=url)
    world.set_faults(FAULTS[faults])
    with (
        open_run_store(url) as runs,
        PostgresStore.from_conn_string(libpq_url(url)) as health,
    ):
        with setup_lock(url):
            health.setup()
        agent = Agent(
            settings(float(cool), gated=action != "run"),
            store=runs,
            registry=world.registry(timeout=600),
            model=flow_model(),
            tool_health=health,
        )
        print("ready", flush=True)
        result = act(agent, action, thread)
        print(json.dumps(report(result, agent, world)), flush=True)
    world.close()


if __name__ == "__main__":
    main(*sys.argv[1:6])
