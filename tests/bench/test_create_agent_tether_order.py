"""create_agent_tether's middleware is in an order tether's docs give, and its build checks it."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents.middleware import (
    HumanInTheLoopMiddleware,
    ModelCallLimitMiddleware,
    ModelRetryMiddleware,
    ToolCallLimitMiddleware,
    ToolRetryMiddleware,
)
from langchain_tether import RepeatGuardMiddleware, TetherMiddleware, check_order
from tether.testing import ScriptedChatModel
from tether_bench.agents import make_agent
from tether_bench.agents.base import ChatSettings
from tether_bench.agents.create_agent_tether import CreateAgentTetherAgent
from tether_bench.agents.lc_tools import registry_tools
from tether_bench.gates import ApprovalDesk
from tether_bench.harness import Harness
from tether_bench.instrument import RecordingRegistry, RunRecorder
from tether_bench.scenarios import Scenario
from tether_bench.worlds import WorldFactory

HARNESS = Harness(step_cap=7, token_budget=54_321, retry_initial_delay=0.0)
SCENARIO = Scenario(id="o", category="db", language="en", task="Pay ORD-2024-001.", gold_answer="x")
CHAT = ChatSettings(base_url="http://127.0.0.1:9/v1", model="unused")


def _middleware(agent: CreateAgentTetherAgent, worlds: WorldFactory) -> list[Any]:
    with worlds.fresh() as world:
        registry = RecordingRegistry.wrap(world.registry(), RunRecorder())
        tools = registry_tools(registry, raise_transient=True, harness=agent.harness, retry=False)
        return agent.agent_middleware(ApprovalDesk(SCENARIO, registry), tools, CHAT)


def test_the_benchmarks_middleware_is_an_order_check_order_takes(worlds: WorldFactory) -> None:
    agent = make_agent("create_agent_tether", HARNESS)
    assert isinstance(agent, CreateAgentTetherAgent)
    middleware = _middleware(agent, worlds)
    assert check_order(middleware) is middleware  # raises on an order tether refuses
    kinds = [type(m) for m in middleware]
    assert ModelCallLimitMiddleware not in kinds
    at = {kind: kinds.index(kind) for kind in kinds}
    assert at[HumanInTheLoopMiddleware] < at[TetherMiddleware]
    for retry in (ToolRetryMiddleware, ModelRetryMiddleware):
        assert at[TetherMiddleware] < at[retry] < at[RepeatGuardMiddleware]
    # the step cap is tether's, the harness's; the tool-call limit is create_agent's
    tether = next(m for m in middleware if isinstance(m, TetherMiddleware))
    assert tether.settings.max_steps == HARNESS.step_cap
    limit = next(m for m in middleware if isinstance(m, ToolCallLimitMiddleware))
    assert limit.thread_limit == HARNESS.step_cap


def test_the_build_refuses_a_list_check_order_refuses(
    worlds: WorldFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The old list, create_agent's call limit outside the gate, fails when the agent is built
    (langchain_tether.create_agent checks it), not silently at run time."""
    agent = make_agent("create_agent_tether", HARNESS)
    assert isinstance(agent, CreateAgentTetherAgent)
    built = CreateAgentTetherAgent.agent_middleware

    def with_call_limit(self: CreateAgentTetherAgent, *args: Any, **kwargs: Any) -> list[Any]:
        limit = ModelCallLimitMiddleware(thread_limit=HARNESS.step_cap, exit_behavior="end")
        return [limit, *built(self, *args, **kwargs)]

    monkeypatch.setattr(CreateAgentTetherAgent, "agent_middleware", with_call_limit)
    with worlds.fresh() as world:
        registry = RecordingRegistry.wrap(world.registry(), RunRecorder())
        model = ScriptedChatModel(responses=["done"])
        with pytest.raises(ValueError, match="ModelCallLimitMiddleware"):
            agent.open_thread(SCENARIO, registry, model, CHAT)  # type: ignore[arg-type]
