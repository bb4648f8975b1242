"""The three agents on the same tools: wiring, tool wrapping, retries, approval gates."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import get_args

import pytest
from tether import StopCause
from tether.errors import TransientToolError
from tether_bench.agents import VARIANTS, BenchAgent, ChatSettings, make_agent
from tether_bench.agents.agent_executor import AgentExecutorAgent
from tether_bench.agents.create_agent import CreateAgentAgent
from tether_bench.agents.create_agent_tether import CreateAgentTetherAgent
from tether_bench.agents.lc_tools import registry_tools
from tether_bench.agents.tether_agent import (
    TERMINATIONS,
    TetherAgent,
    outcome_of,
    tether_settings,
)
from tether_bench.harness import Harness
from tether_bench.instrument import RecordingRegistry, RunRecorder
from tether_bench.judge import Judge
from tether_bench.operator import write_tools
from tether_bench.records import Outcome, RunRecord, TerminationKind
from tether_bench.scenarios import Scenario
from tether_bench.simulator import PERFECT, LatencyModel, Simulator, SimulatorServer, model_name
from tether_bench.worlds import ExpectedStates, WorldFactory, prepare

NO_WAIT = Harness(retry_initial_delay=0.0)
AGENTS: dict[str, BenchAgent] = {
    "tether": TetherAgent(harness=NO_WAIT, sleep=lambda _: None),
    "agent_executor": AgentExecutorAgent(harness=NO_WAIT, sleep=lambda _: None),
    "create_agent": CreateAgentAgent(harness=NO_WAIT),
    "create_agent_stock": CreateAgentAgent(harness=NO_WAIT, middleware=False, sleep=lambda _: None),
    "create_agent_tether": CreateAgentTetherAgent(harness=NO_WAIT),
}


@pytest.fixture(scope="module")
def clean_sim(scenarios: list[Scenario]) -> Iterator[tuple[Simulator, str]]:
    """A simulator that never errs: every agent should do exactly the gold plan."""
    simulator = Simulator(scenarios, persona=PERFECT, latency=LatencyModel.instant())
    with SimulatorServer(simulator) as server:
        yield simulator, server.base_url


def run(
    name: str, scenario: Scenario, sim: tuple[Simulator, str], worlds: WorldFactory
) -> tuple[RunRecord, bool]:
    _, url = sim
    session = model_name(scenario.id, 0, name)
    chat = ChatSettings(base_url=url, model=session)
    with worlds.fresh() as world:
        prepare(world, scenario)
        record = AGENTS[name].run(scenario, world, chat)
        verdict = Judge(ExpectedStates(worlds)).judge(scenario, record, world)
    return record, verdict.passed


@pytest.mark.parametrize("agent", list(AGENTS))
@pytest.mark.parametrize("scenario_id", ["api-pay-01", "impossible-no-tool-02"])
def test_every_agent_follows_a_faultless_model_to_a_pass(
    agent: str,
    scenario_id: str,
    by_id: dict[str, Scenario],
    clean_sim: tuple[Simulator, str],
    worlds: WorldFactory,
) -> None:
    scenario = by_id[scenario_id]
    record, passed = run(agent, scenario, clean_sim, worlds)
    assert passed, (record.termination, record.termination_reason, record.answer)
    # look_first is off for a server model (on only under the small-model profile), so no
    # agent here looks before the refusal; tether_small would (test_look_first.py)
    looked: list[str] = []
    assert [c.tool for c in record.tool_calls] == [a.tool for a in scenario.gold_actions] + looked
    calls = len(scenario.gold_actions) + len(looked)
    # tether's final-answer check sends a refusal given before any lookup back once (the task
    # names P001, which get_product can look up); the simulated model gives it again, taken
    sent_back = int(agent in ("tether", "create_agent_tether") and not scenario.gold_actions)
    assert record.steps == calls + 1 + sent_back
    asked = [c.asked_tool for c in record.model_calls]
    assert asked[:calls] == [True] * calls and asked[-1] is False
    assert record.usage_complete and record.total_tokens > 0
    assert all(c.status == "success" for c in record.tool_calls)
    with worlds.fresh() as world:
        gated = write_tools(world.registry())
    writes = [a.tool for a in scenario.gold_actions if a.tool in gated]
    assert [(a.tool, a.approved) for a in record.approvals] == [(w, True) for w in writes]


@pytest.mark.parametrize("agent", AGENTS)
def test_transient_payment_failures_are_retried_in_place_by_every_agent(
    agent: str, by_id: dict[str, Scenario], clean_sim: tuple[Simulator, str], worlds: WorldFactory
) -> None:
    """The harness's retry policy reaches every variant, natively or around the tools (in
    create_agent_tether, ToolRetryMiddleware retries the reads and tether replays a write
    with the same arguments)."""
    scenario = by_id["fault-pay-02"]  # the payment API fails twice with 503
    record, passed = run(agent, scenario, clean_sim, worlds)
    assert passed
    pay = [c for c in record.tool_calls if c.tool == "pay_order"]
    assert [c.status for c in pay] == ["error", "error", "success"]
    assert len({c.turn for c in pay}) == 1  # one model turn, retried in place


def test_wrapped_tools_answer_with_the_registry_envelope(worlds: WorldFactory) -> None:
    with worlds.fresh() as world:
        registry = RecordingRegistry.wrap(world.registry(), RunRecorder())
        native = {t.name: t for t in registry_tools(registry, raise_transient=True)}
        react = {t.name: t for t in registry_tools(registry, text_input=True)}
        bad = json.loads(native["query_order"].invoke({"order_id": "nope"}))
        assert bad["status"] == "error" and bad["meta"]["error_type"] == "validation_error"
        direct = registry.invoke("query_order", {"order_id": "nope"})
        assert bad["message"] == direct["message"]  # the same envelope (latency aside)
        ok = json.loads(react["query_order"].invoke('{"order_id": "ORD-2024-001"}'))
        assert ok["data"]["status"] == "pending"
        curly = json.loads(react["query_order"].invoke("{“order_id”: “ORD-2024-001”}"))
        assert curly["status"] == "error" and "could not read the Action Input" in curly["message"]
        assert [c.tool for c in registry.recorder.tool_calls] == ["query_order"] * 3
        world.set_faults({"query_order": {"schedule": {0: {"status": 503}}}})  # type: ignore[attr-defined]
        with pytest.raises(TransientToolError):
            native["query_order"].invoke({"order_id": "ORD-2024-001"})
        assert native["query_order"].args_schema is registry.get("query_order").args_schema  # type: ignore[union-attr]


def test_tether_runs_with_default_settings_and_gates_on_exactly_the_named_tools() -> None:
    settings = tether_settings(
        base_url="http://127.0.0.1:1/v1",
        model="m",
        temperature=0.7,
        max_tokens=512,
        timeout=5,
        approval_tools={"pay_order", "cancel_order"},
    )
    defaults = type(settings)()
    assert settings.approval_tools == ["cancel_order", "pay_order"]
    changed = {
        k for k in type(settings).model_fields if getattr(settings, k) != getattr(defaults, k)
    }
    assert changed <= {"base_url", "model", "temperature", "request_timeout", "approval_tools"}


def test_tether_takes_the_harness_numbers() -> None:
    harness = Harness(step_cap=7, token_budget=30_000, tool_attempts=2, retry_initial_delay=0.1)
    settings = tether_settings(
        base_url="http://127.0.0.1:1/v1",
        model="m",
        temperature=0.7,
        max_tokens=512,
        timeout=5,
        harness=harness,
    )
    assert (settings.max_steps, settings.token_budget) == (7, 30_000)
    assert (settings.tool_attempts, settings.retry_base_delay) == (2, 0.1)


def test_tether_small_is_tether_with_the_small_model_profile() -> None:
    shared = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "temperature": 0.0}
    plain = tether_settings(**shared, max_tokens=8, timeout=1.0)
    small = tether_settings(**shared, max_tokens=8, timeout=1.0, small_model=True)
    assert not plain.small_profile and small.small_profile  # a URL is not the embedded model
    assert make_agent("tether_small").name == "tether_small"
    assert make_agent("tether").name == "tether"


def test_every_stop_cause_has_a_termination() -> None:
    assert set(TERMINATIONS) == set(get_args(StopCause))
    # a cause ends its run with the status whose name is the benchmark's kind, or an error
    kinds = set(get_args(TerminationKind))
    assert set(TERMINATIONS.values()) <= kinds


@pytest.mark.parametrize("cause", list(get_args(StopCause)))
def test_a_final_state_is_its_causes_outcome(cause: str) -> None:
    outcome = outcome_of({"status": "failed", "cause": cause, "reason": "why", "answer": "a"})
    assert outcome == Outcome(
        answer="a", termination=TERMINATIONS[cause], reason="why", cause=cause
    )  # type: ignore[index]


@pytest.mark.parametrize("cause", ["exploded", "", None, 3])
def test_a_cause_tether_does_not_have_is_an_error_that_names_it(cause: object) -> None:
    outcome = outcome_of({"status": "failed", "cause": cause, "reason": "why"})
    assert outcome.termination == "error"
    assert outcome.reason == f"tether has no stop cause {cause!r} (status 'failed'): why"


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_agent_is_stopped_by_the_budget_before_the_same_call(
    variant: str, by_id: dict[str, Scenario], clean_sim: tuple[Simulator, str], worlds: WorldFactory
) -> None:
    """One budget mechanic for every agent: the first model call fits, the second call's
    prompt and its reply's reserve would not. Every variant stops before that call (its write
    is never made, the run spends no more than the budget) and the run is ``partial`` with no
    answer, whatever the framework does with the guard's exception (create_agent's
    ModelRetryMiddleware retries it, then hands its text back as the model's reply) and
    whatever last answer tether asks for at the budget."""
    scenario = by_id["api-pay-01"]  # query_order, compute_discount, pay_order, the answer
    _, url = clean_sim
    reserve = ChatSettings(base_url=url, model="m").max_tokens

    def run_with(budget: int, trial: int) -> tuple[RunRecord, list[str]]:
        agent = make_agent(variant, Harness(token_budget=budget, retry_initial_delay=0.0))
        chat = ChatSettings(base_url=url, model=model_name(scenario.id, trial, variant))
        with worlds.fresh() as world:
            prepare(world, scenario)
            record = agent.run(scenario, world, chat)
            verdict = Judge(ExpectedStates(worlds)).judge(scenario, record, world)
        return record, verdict.failures

    clean, failures = run_with(10**9, trial=1)
    assert clean.termination == "completed" and not failures, (clean.termination, failures)
    assert [c.tool for c in clean.tool_calls] == ["query_order", "compute_discount", "pay_order"]
    first, second = clean.model_calls[0], clean.model_calls[1]
    # after the first call, the second's prompt and reserve would cross it by half its prompt
    budget = first.total_tokens + reserve + second.input_tokens // 2
    record, failures = run_with(budget, trial=2)
    assert (record.termination, record.answer) == ("partial", None), record.termination_reason
    assert f"token budget {budget} would be exceeded" in record.termination_reason
    assert [c.tool for c in record.tool_calls] == ["query_order"]  # stopped before the 2nd
    assert record.total_tokens <= budget
    assert "no final answer" in failures
    assert any(f.startswith("ended with partial") for f in failures), failures
