"""The judge: the gold replay passes every scenario; wrong trajectories and adversaries fail."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import pytest
from tether_bench.adversarial import score_adversaries
from tether_bench.agents.gold import GoldReplayAgent, Script, ScriptedAgent, gold_script
from tether_bench.backends import UrlBackend
from tether_bench.judge import judge_run
from tether_bench.records import RunRecord, ToolCall
from tether_bench.runner import BenchResult, RunPlan, run_benchmark, sample_scenarios
from tether_bench.scenarios import Scenario, ToolAction
from tether_world.seed import DEFAULT_SEED, generate

from tests.bench.conftest import SCENARIO_FILE

UNUSED_MODEL = UrlBackend("http://127.0.0.1:9/v1", "unused")  # scripted agents never call it


def run(agent: ScriptedAgent, scenarios: list[Scenario]) -> BenchResult:
    plan = RunPlan(agents=[agent.name], scenarios=scenarios, concurrency=2, progress=False)
    return run_benchmark(plan, UNUSED_MODEL, agent_factory=lambda _: agent)


def passed(result: BenchResult) -> list[str]:
    return [r.scenario_id for r in result.records if r.verdict and r.verdict.passed]


def test_gold_replay_passes_a_sample_of_every_category(scenarios: list[Scenario]) -> None:
    """make_scenarios replays all of them; here a sample with every category and feature."""
    sample = sample_scenarios(scenarios, 21, seed=3)
    sample += [s for s in scenarios if s.initial_state or s.id == "api-pay-01"]
    assert {s.category for s in sample} == {s.category for s in scenarios}
    result = run(GoldReplayAgent(), sample)
    failures = {r.scenario_id: r.verdict.failures for r in result.records if r.verdict}
    assert sorted(passed(result)) == sorted(s.id for s in sample), failures
    assert result.metrics["gold"].success_rate == 1.0


def wrong_amount(scenario: Scenario) -> Script:
    """Pays a cent too much: the payment API refuses it, so the order stays unpaid."""
    actions = [
        ToolAction(
            tool=a.tool,
            arguments={**a.arguments, "amount": str(Decimal(a.arguments["amount"]) + 1)}
            if a.tool == "pay_order"
            else a.arguments,
        )
        for a in scenario.gold_actions
    ]
    return Script(actions=actions, answer=scenario.gold_answer)


def untouched_pending_order() -> str:
    """A pending order that no scenario mentions."""
    mentioned = SCENARIO_FILE.read_text(encoding="utf-8")
    orders = generate(DEFAULT_SEED).tables["orders"]
    return next(o["id"] for o in orders if o["status"] == "pending" and o["id"] not in mentioned)


def extra_write(scenario: Scenario) -> Script:
    """The gold plan plus cancelling an order nobody mentioned; the answer is still right."""
    extra = ToolAction(tool="cancel_order", arguments={"order_id": untouched_pending_order()})
    return Script(actions=[*scenario.gold_actions, extra], answer=scenario.gold_answer)


def endless_loop(scenario: Scenario) -> Script:
    """The gold plan, then the same lookup over and over until a step cap cuts it off."""
    loop = [ToolAction(tool="query_order", arguments={"order_id": "ORD-2024-002"})] * 8
    return Script(
        actions=[*scenario.gold_actions, *loop],
        answer=None,
        termination="max_steps",
        reason="step cap reached",
    )


def right_work_wrong_words(scenario: Scenario) -> Script:
    """Everything done, but the answer leaves out what the user asked for."""
    return Script(actions=list(scenario.gold_actions), answer="Done.")


@pytest.mark.parametrize(
    "script",
    [wrong_amount, extra_write, endless_loop, right_work_wrong_words],
    ids=lambda f: f.__name__,
)
def test_wrong_trajectories_score_zero(
    script: Callable[[Scenario], Script], scenarios: list[Scenario]
) -> None:
    paying = [
        s
        for s in scenarios
        if s.category == "api" and "pay_order" in {a.tool for a in s.gold_actions}
    ]
    chosen = paying[:3] + [s for s in scenarios if s.id == "api-refund-01"]
    if script is wrong_amount:
        chosen = paying[:4]
    result = run(ScriptedAgent(script, name=script.__name__), chosen)
    assert passed(result) == []
    if script is extra_write:  # it failed on the world's state, not only on a forbidden call
        assert all(
            "world state differs" in r.verdict.failures[0] for r in result.records if r.verdict
        )
    assert result.metrics[script.__name__].success_rate == 0.0


def test_each_failure_is_named(by_id: dict[str, Scenario]) -> None:
    scenario = by_id["api-pay-01"]
    record = RunRecord(
        agent="x",
        scenario_id=scenario.id,
        category=scenario.category,
        termination="max_steps",
        termination_reason="cap",
        wall_s=1.0,
        tool_calls=[
            ToolCall(
                tool="cancel_order",
                arguments={"order_id": "ORD-2024-001"},
                status="error",
                start=0,
                end=0.1,
                turn=0,
            )
        ],
    )
    verdict = judge_run(scenario, record, world_hash="a", expected_hash="b")
    assert not verdict.passed
    text = " | ".join(verdict.failures)
    for fragment in (
        "world state differs",
        "no final answer",
        "forbidden call cancel_order",
        "ended with max_steps",
    ):
        assert fragment in text


def test_stopping_early_means_within_the_call_limit(by_id: dict[str, Scenario]) -> None:
    scenario = by_id["impossible-missing-01"]
    assert scenario.max_model_calls is not None
    from tether_bench.records import ModelCall

    calls = [ModelCall(start=i, end=i + 0.5) for i in range(scenario.max_model_calls + 1)]
    record = RunRecord(
        agent="x",
        scenario_id=scenario.id,
        category="impossible",
        answer=scenario.gold_answer,
        termination="completed",
        wall_s=10,
        model_calls=calls,
    )
    verdict = judge_run(scenario, record, "h", "h")
    assert verdict.failures == [
        f"did not stop early: {len(calls)} model calls, at most {scenario.max_model_calls}"
    ]
    record.model_calls = calls[:-1]
    assert judge_run(scenario, record, "h", "h").passed


def test_gold_script_is_the_scenarios_own_plan(by_id: dict[str, Scenario]) -> None:
    script = gold_script(by_id["api-pay-01"])
    assert [a.tool for a in script.actions] == ["query_order", "compute_discount", "pay_order"]
    assert "2328.02" in (script.answer or "")


def test_adversaries_pass_nothing_and_gold_everything_on_a_sample(
    scenarios: list[Scenario],
) -> None:
    """Each adversary on every sampled scenario where it acts differently from gold.

    ``python -m tether_bench.adversarial`` runs them on every scenario (docs/benchmark.md).
    """
    sample = sample_scenarios(scenarios, 7, seed=11)
    scores = {s.agent: s for s in score_adversaries(sample)}
    assert scores["gold"].passes == scores["gold"].runs == len(sample)
    for name, score in scores.items():
        if name != "gold":
            assert score.runs > 0, name
            assert score.rate <= 0.02, (name, score.passed_ids)
