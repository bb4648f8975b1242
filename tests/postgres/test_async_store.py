"""The async run store on PostgreSQL: AsyncAgent pauses and resumes there, and the sync Agent
picks up what it left."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from tether import Agent, AgentSettings, AsyncAgent, ToolRegistry, tool
from tether.control import open_async_run_store, open_run_store
from tether.testing import ScriptedChatModel

from tests.scripts import act, final

pytestmark = pytest.mark.postgres

APPROVE = {"decisions": [{"type": "approve"}]}
PAY = act("pay_order", '{"order_id": "A1"}')


def test_async_agent_on_postgres_and_the_sync_agent_after_it(pg_url: str) -> None:
    paid: list[str] = []

    @tool(side_effects=True)
    def pay_order(order_id: str) -> str:
        """Pay an order."""
        paid.append(order_id)
        return "paid"

    tools = ToolRegistry([pay_order])
    model = ScriptedChatModel(responses=[PAY, final("paid"), PAY, final("paid")])

    async def main() -> Any:
        async with open_async_run_store(pg_url) as store:
            agent = AsyncAgent(AgentSettings(), store=store, registry=tools, model=model)
            assert (await agent.run("pay A1", thread_id="a")).pending is not None
            done = await agent.resume("a", APPROVE)
            assert (await agent.run("pay A1", thread_id="b")).pending is not None
            return done, await agent.runs()

    done, runs = asyncio.run(main())
    assert done.status == "completed" and paid == ["A1"]
    assert {r.thread_id: r.waiting_for for r in runs} == {"a": None, "b": "approval"}
    with open_run_store(pg_url) as store:
        agent = Agent(AgentSettings(), store=store, registry=tools, model=model)
        assert agent.status("a").status == "completed"
        assert agent.resume("b", APPROVE).status == "completed"
        assert [s["proposal"] for s in agent.show("a")["steps"]] == ["pay_order", "final"]
    assert paid == ["A1", "A1"]


def test_a_long_rejection_through_command_resume_is_kept_small_on_postgres(pg_url: str) -> None:
    """LangGraph saved a 2 MB resume value twice in checkpoint_writes; the async saver's
    copy keeps the decision read from it, the message cut."""
    import psycopg
    from langgraph.types import Command
    from tether import build_graph

    paid: list[str] = []

    @tool(side_effects=True)
    def pay_order(order_id: str) -> str:
        """Pay an order."""
        paid.append(order_id)
        return "paid"

    model = ScriptedChatModel(responses=[PAY, final("not paid")])
    rejection = {"decisions": [{"type": "reject", "message": "no " * 700_000}]}  # 2.1 MB

    async def main() -> Any:
        async with open_async_run_store(pg_url) as store:
            graph = build_graph(
                AgentSettings(), model=model, registry=[pay_order], checkpointer=store.checkpointer
            )
            config: Any = {"configurable": {"thread_id": "r"}}
            await graph.ainvoke({"task": "pay A1"}, config)
            return await graph.ainvoke(Command(resume=rejection), config)

    done = asyncio.run(main())
    assert done["status"] == "completed" and paid == []
    assert "…[cut " in done["tool_buffer"][-1]["result"]["message"]
    with psycopg.connect(pg_url) as conn:
        row = conn.execute("SELECT sum(length(blob)), max(length(blob)) FROM checkpoint_writes")
        total, largest = row.fetchone()  # type: ignore[misc]
    assert total < 100_000 and largest < 10_000, (total, largest)
