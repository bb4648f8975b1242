"""create_agent on the demo world's tools, saved step by step in a SQLite checkpointer, with
tether's middleware (``tether``) or without (``plain``).

``run``: a scripted model looks the order up and pays it; the process SIGKILLs itself just
after the payment's result reaches the checkpointer. ``resume``: a new process continues the
thread, its model proposing the payment again (as a model that lost track would), then
answering; it prints the run's last message, tether's status and what each payment call
came back with, as JSON.

Each process sends the payment API its own run id, so the two would not share an
idempotency key: the second proposal is kept from the API by the run's own record (with
tether's middleware), or by the API's refusal to pay an order twice (without).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import sys
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_tether import tether_middleware
from langgraph.checkpoint.sqlite import SqliteSaver
from tether.testing import ScriptedChatModel
from tether_world import World

ORDER = "ORD-2024-001"
AMOUNT = "2328.02"
TASK = f"Look up order {ORDER} and pay it ({AMOUNT})."
ANSWER = f"{ORDER} is paid: {AMOUNT}."


def call(name: str, i: int, **args: Any) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call-{i}"}])


def replies(role: str) -> list[Any]:
    pay = call("pay_order", 2, order_id=ORDER, amount=AMOUNT)
    if role == "run":
        return [call("query_order", 1, order_id=ORDER), pay]
    again = call("pay_order", 3, order_id=ORDER, amount=AMOUNT)
    return [again, ANSWER, ANSWER]  # the answer twice, should the check send it back


def paid(writes: Any) -> bool:
    """The writes hold the payment's result."""
    for _, value in writes:
        values = value if isinstance(value, list) else [value]
        if any(isinstance(v, ToolMessage) and v.name == "pay_order" for v in values):
            return True
    return False


def die_after_the_payment(saver: SqliteSaver) -> None:
    put_writes = saver.put_writes

    def dying(config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        put_writes(config, writes, task_id, task_path)
        if paid(writes):
            os.kill(os.getpid(), signal.SIGKILL)

    saver.put_writes = dying  # type: ignore[method-assign]


def main(mode: str, role: str, store_path: str, world_dir: str) -> None:
    world = World.create(Path(world_dir))
    saver = SqliteSaver(sqlite3.connect(store_path, check_same_thread=False))
    if role == "run":
        die_after_the_payment(saver)
    tools = world.registry().tools()
    agent = create_agent(
        ScriptedChatModel(responses=replies(role)),
        tools=tools,
        middleware=tether_middleware(tools=tools) if mode == "tether" else [],
        checkpointer=saver,
    )
    config: Any = {
        "configurable": {"thread_id": "killed", "tether_run_id": f"process-{os.getpid()}"}
    }
    payload = {"messages": [HumanMessage(TASK)]} if role == "run" else None
    out = agent.invoke(payload, config, durability="sync")
    payments = [
        m.text for m in out["messages"] if isinstance(m, ToolMessage) and m.name == "pay_order"
    ]
    report = {"last": out["messages"][-1].text, "status": out.get("tether_status")}
    print(json.dumps({**report, "payments": payments}))


if __name__ == "__main__":
    main(*sys.argv[1:5])
