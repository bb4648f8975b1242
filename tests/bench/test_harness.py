"""Harness parity: every variant runs with the same step cap, token budget and retry policy."""

from __future__ import annotations

import contextlib
import logging
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, LLMResult
from tether import AgentSettings
from tether.testing import ScriptedChatModel
from tether_bench.agents import VARIANTS, make_agent
from tether_bench.agents.base import ChatSettings, budget_guard
from tether_bench.harness import (
    BudgetExceeded,
    Harness,
    TokenBudgetGuard,
    effective_settings,
    request_tokens,
    settings_table,
)
from tether_bench.instrument import RecordingRegistry, RunRecorder
from tether_bench.records import Outcome
from tether_bench.scenarios import Scenario
from tether_bench.worlds import WorldFactory

ODD = Harness(step_cap=4, token_budget=12_345, tool_attempts=4, retry_initial_delay=0.25)


@pytest.mark.parametrize("harness", [Harness(), ODD], ids=["default", "odd"])
def test_every_variant_reads_back_the_harness_numbers(harness: Harness) -> None:
    rows = {r.agent: r for r in effective_settings(harness)}
    assert set(rows) == set(VARIANTS)
    waits = tuple(harness.delay(a) for a in range(1, harness.tool_attempts))
    for row in rows.values():
        assert row.step_cap == harness.step_cap, row
        assert row.token_budget == harness.token_budget, row
        assert row.tool_attempts == harness.tool_attempts, row
        assert row.retry_delays_s == waits, row
    assert rows["agent_executor"].output_repair != rows["agent_executor_stock"].output_repair
    assert rows["create_agent"].tool_call_limit == harness.step_cap
    assert rows["create_agent_stock"].tool_call_limit is None


def test_the_table_has_a_row_per_variant() -> None:
    text = settings_table()
    assert all(f"| {name} |" in text for name in VARIANTS)


def _result(total: int) -> LLMResult:
    message = AIMessage(
        content="x",
        usage_metadata={"input_tokens": total, "output_tokens": 0, "total_tokens": total},
    )
    return LLMResult(generations=[[ChatGeneration(message=message)]])


def test_the_budget_guard_stops_once_the_total_is_exceeded() -> None:
    guard = TokenBudgetGuard(100)
    guard.on_llm_end(_result(60))
    guard.on_llm_end(_result(40))  # exactly at the budget: tether too goes on
    with pytest.raises(BudgetExceeded, match="spent 101"):
        guard.on_llm_end(_result(1))


def _looping_model(n: int, react: bool, *, same: bool = True) -> ScriptedChatModel:
    """A model that asks for the same lookup forever (more replies than any cap); ``same``
    False: a lookup of another order each time."""
    if react:
        reply = 'Thought: look\nAction: query_order\nAction Input: {"order_id": "ORD-2024-001"}'
        return ScriptedChatModel(responses=[reply] * n)
    orders = [f"ORD-2024-{1 if same else i + 1:03d}" for i in range(n)]
    return ScriptedChatModel(
        responses=[
            AIMessage(
                content="",
                tool_calls=[{"name": "query_order", "args": {"order_id": o}, "id": f"c{i}"}],
            )
            for i, o in enumerate(orders)
        ]
    )


@pytest.mark.parametrize(
    "variant", ["agent_executor", "create_agent", "create_agent_stock", "create_agent_tether"]
)
def test_baselines_stop_at_the_step_cap(variant: str, worlds: WorldFactory) -> None:
    harness = Harness(step_cap=4, token_budget=10**9)
    agent = make_agent(variant, harness)
    # tether's repeat guard would end a loop of the same call first (the next test)
    same = variant != "create_agent_tether"
    model = _looping_model(20, react=variant.startswith("agent_executor"), same=same)
    scenario = Scenario(
        id="loop", category="db", language="en", task="Status of ORD-2024-001?", gold_answer="x"
    )
    chat = ChatSettings(base_url="http://127.0.0.1:9/v1", model="unused")
    with worlds.fresh() as world:
        registry = RecordingRegistry.wrap(world.registry(), RunRecorder())
        outcome = agent.execute(scenario, registry, model, chat)  # type: ignore[arg-type]
    assert outcome.termination == "max_steps", outcome
    # tether's max_steps, like the tether agent, then asks for a last answer with no tools
    asked = int(variant == "create_agent_tether")
    assert len(model.calls) == harness.step_cap + asked
    if asked:
        steps, last = model.calls[:-1], model.calls[-1]
        assert all(call.kwargs.get("tools") for call in steps) and not last.kwargs.get("tools")


def test_tethers_middleware_ends_a_loop_of_the_same_call_before_the_cap(
    worlds: WorldFactory,
) -> None:
    agent = make_agent("create_agent_tether", Harness(step_cap=6, token_budget=10**9))
    model = _looping_model(20, react=False)
    scenario = Scenario(
        id="loop", category="db", language="en", task="Status of ORD-2024-001?", gold_answer="x"
    )
    chat = ChatSettings(base_url="http://127.0.0.1:9/v1", model="unused")
    with worlds.fresh() as world:
        registry = RecordingRegistry.wrap(world.registry(), RunRecorder())
        outcome = agent.execute(scenario, registry, model, chat)  # type: ignore[arg-type]
    assert outcome.termination == "no_progress" and outcome.answer is None, outcome
    notes = AgentSettings().repeat_notes  # each repeat answered with a note, then the stop
    assert len(model.calls) == notes + 2 and len(registry.recorder.tool_calls) == 1


def test_a_budget_stop_is_a_partial_run(worlds: WorldFactory, monkeypatch: Any) -> None:
    agent = make_agent("agent_executor", Harness(token_budget=1))

    def spend(*_: Any) -> Any:
        def say(message: str) -> Outcome:
            guard = TokenBudgetGuard(agent.harness.token_budget)
            guard.on_llm_end(_result(2))
            raise AssertionError("the guard lets a spent budget through")

        return say

    monkeypatch.setattr(agent, "open_thread", spend)
    scenario = Scenario(id="b", category="db", language="en", task="t", gold_answer="x")
    with worlds.fresh() as world:
        record = agent.run(
            scenario, world, ChatSettings(base_url="http://127.0.0.1:9/v1", model="m")
        )
    assert record.termination == "partial" and "token budget 1" in record.termination_reason


def test_the_guard_refuses_a_call_whose_prompt_and_reserve_would_cross_the_budget() -> None:
    """tether's rule, before the call: spent + the request's count + the reply's reserve."""
    prompt = [[HumanMessage("pay order ORD-2024-001 " * 20)]]
    size = request_tokens(prompt[0])
    assert size > 20
    guard = TokenBudgetGuard(10 + size + 50, reserve=50)
    guard.on_llm_end(_result(10))
    guard.on_chat_model_start({}, prompt)  # exactly at the budget: the call goes ahead
    guard.spent += 1
    with pytest.raises(BudgetExceeded, match=f"would be exceeded: spent 11, next prompt ~{size}"):
        guard.on_chat_model_start({}, prompt)
    guard.new_message()  # the next user message starts its own budget
    assert (guard.spent, guard.fired) == (0, None)
    guard.on_chat_model_start({}, prompt)


def test_the_tool_schemas_a_call_is_sent_count_against_the_budget() -> None:
    tool = {"type": "function", "function": {"name": "query_order", "parameters": {}}}
    prompt = [HumanMessage("hi")]
    assert request_tokens(prompt, [tool]) > request_tokens(prompt) + 5


def test_the_guard_keeps_its_first_stop() -> None:
    guard = TokenBudgetGuard(10)
    guard.on_llm_end(_result(10))
    assert guard.fired is None
    for _ in range(2):
        with pytest.raises(BudgetExceeded):
            guard.on_llm_end(_result(5))
    assert guard.fired is not None and "spent 15" in str(guard.fired)


def test_after_its_stop_the_guard_refuses_every_call_before_it_is_sent() -> None:
    guard = TokenBudgetGuard(10)
    guard.on_chat_model_start({}, [[]])  # within the budget: the call goes ahead
    with pytest.raises(BudgetExceeded):
        guard.on_llm_end(_result(11))
    with pytest.raises(BudgetExceeded, match="spent 11"):
        guard.on_chat_model_start({}, [[]])  # a retry of the stopped call spends nothing
    assert guard.spent == 11


@pytest.mark.parametrize("ending", ["completed", "max_steps", "error"])
def test_a_budget_stop_the_framework_caught_is_still_partial(
    ending: str, worlds: WorldFactory, monkeypatch: Any
) -> None:
    """A framework that catches the guard's exception and ends its own way (with any text:
    create_agent's ModelRetryMiddleware returns the failure as the model's reply) is still
    stopped by the budget: partial, and its "answer" is not one."""
    agent = make_agent("create_agent", Harness(token_budget=1))

    def swallow(scenario: Any, registry: Any, model: Any, chat: Any) -> Any:
        guard = budget_guard(model)
        assert guard is not None  # the run's own guard, on the model the agent gets

        def say(message: str) -> Outcome:
            with contextlib.suppress(BudgetExceeded):  # what a retry middleware does, in short
                guard.on_llm_end(_result(2))
            if ending == "error":
                raise RuntimeError("went on and crashed")
            answer = "All done: ORD-2024-001 is paid."
            return Outcome(answer=answer, termination=ending, reason="r")  # type: ignore[arg-type]

        return say

    monkeypatch.setattr(agent, "open_thread", swallow)
    scenario = Scenario(id="b", category="db", language="en", task="t", gold_answer="x")
    with worlds.fresh() as world:
        record = agent.run(
            scenario, world, ChatSettings(base_url="http://127.0.0.1:9/v1", model="m")
        )
    assert (record.termination, record.answer) == ("partial", None)
    assert record.termination_reason.startswith("token budget 1 exceeded: spent 2; ")
    assert f"ended {ending}" in record.termination_reason


def test_budget_stops_are_not_logged_as_callback_errors(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("langchain_core.callbacks.manager")
    with caplog.at_level(logging.WARNING):
        logger.warning("Error in %s.%s callback: %s", "TokenBudgetGuard", "on_llm_end", "x")
        logger.warning("Error in %s.%s callback: %s", "OtherHandler", "on_llm_end", "y")
    assert [r.args[0] for r in caplog.records] == ["OtherHandler"]  # type: ignore[index]
