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
