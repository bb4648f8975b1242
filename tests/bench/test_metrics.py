"""Metric arithmetic on hand-made runs: every number checked against a hand computation."""

from __future__ import annotations

import math

import pytest
from tether_bench.metrics import agent_metrics, pass_hat_k, percentile, wilson
from tether_bench.records import ModelCall, RunRecord, ToolCall, Verdict


def call(start: float, end: float, tokens: int = 100, reported: bool = True) -> ModelCall:
    return ModelCall(
        start=start,
        end=end,
        input_tokens=tokens - 10,
        output_tokens=10,
        total_tokens=tokens,
        usage_reported=reported,
    )


def tool(
    turn: int, start: float, end: float, status: str = "success", error: str | None = None
) -> ToolCall:
    return ToolCall(
        tool="t",
        arguments={},
        status=status,  # type: ignore[arg-type]
        error_type=error,
        start=start,
        end=end,
        turn=turn,
    )


def record(
    scenario: str,
    passed: bool,
    *,
    calls: list[ModelCall],
    tools: list[ToolCall] = (),  # type: ignore[assignment]
    termination: str = "completed",
    wall: float = 10.0,
    trial: int = 0,
    category: str = "db",
) -> RunRecord:
    return RunRecord(
        agent="a",
        scenario_id=scenario,
        category=category,
        trial=trial,
        answer="x" if termination == "completed" else None,
        termination=termination,  # type: ignore[arg-type]
        wall_s=wall,
        model_calls=calls,
        tool_calls=list(tools),
        verdict=Verdict(passed=passed),
    )


def test_wilson_interval_matches_the_textbook_values() -> None:
    low, high = wilson(8, 10)
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)
    assert wilson(0, 10)[0] == 0.0 and round(wilson(0, 10)[1], 4) == 0.2775
    assert wilson(10, 10)[1] == pytest.approx(1.0) and wilson(0, 0) == (0.0, 0.0)


def test_pass_hat_k_is_the_tau_bench_estimator() -> None:
    counts = [(4, 4), (2, 4), (0, 4)]  # c passes out of n trials, per scenario
    assert pass_hat_k(counts, 1) == pytest.approx((1 + 0.5 + 0) / 3)
    assert pass_hat_k(counts, 2) == pytest.approx((1 + math.comb(2, 2) / math.comb(4, 2)) / 3)
    assert pass_hat_k(counts, 4) == pytest.approx(1 / 3)
    assert pass_hat_k([(1, 1)], 2) is None


def test_percentiles_interpolate() -> None:
    values = [1.0, 2.0, 3.0, 4.0, 5.0]
    assert percentile(values, 50) == 3.0
    assert percentile(values, 95) == pytest.approx(4.8)
    assert percentile([], 50) == 0.0


def test_a_run_splits_into_steps_model_tool_and_overhead_time() -> None:
    run = record(
        "s",
        True,
        calls=[call(0.1, 0.6), call(1.0, 1.3), call(2.0, 2.2)],
        tools=[tool(0, 0.7, 0.9), tool(1, 1.4, 1.5, "error"), tool(1, 1.6, 1.8)],
        wall=2.5,
    )
    assert run.step_latencies() == pytest.approx([0.9, 1.0, 0.5])
    # step 1 waited 0.1 s between its failed attempt and the retry (backoff)
    assert run.retry_waits() == pytest.approx([0.0, 0.1, 0.0])
    # step 0: 0.9 - 0.5 model - 0.2 tool; step 1: 1.0 - 0.3 - 0.3 - 0.1; step 2: 0.5 - 0.2
    assert run.step_overheads() == pytest.approx([0.2, 0.3, 0.3])
    assert run.tool_turns() == (2, 2)  # the last call was the final answer
    assert (run.total_tokens, run.input_tokens, run.output_tokens) == (300, 270, 30)


def test_tool_call_success_counts_unparseable_turns_as_failures() -> None:
    run = record(
        "s",
        False,
        calls=[call(0, 1), call(1, 2), call(2, 3), call(3, 4)],
        tools=[tool(0, 0.5, 0.6), tool(2, 2.5, 2.6, "error")],  # turn 1 never reached a tool
        termination="max_steps",
        wall=4.0,
    )
    assert run.tool_turns() == (4, 1)  # cut off: every turn asked for a tool


def test_schema_valid_turns_count_calls_that_ran_right_or_wrong() -> None:
    calls = [call(i, i + 1) for i in range(5)]
    tools = [
        tool(0, 0.5, 0.6),  # ran, succeeded
        tool(1, 1.5, 1.6, "error", "tool_error"),  # ran, the tool said no: still schema-valid
        tool(2, 2.5, 2.6, "error", "validation_error"),  # never got past the schema
        tool(3, 3.5, 3.6, "error", "unknown_tool"),
    ]
    run = record("s", False, calls=calls, tools=tools, wall=5.0)  # turn 4: the final answer
    assert run.tool_turns() == (4, 1)
    assert run.schema_valid_turns() == 2
    metrics = agent_metrics("a", [run])
    assert (metrics.schema_valid_turns, metrics.schema_valid_rate) == (2, 0.5)


def test_a_run_ending_on_an_unparsable_tool_call_counts_it_as_a_failed_turn() -> None:
    calls = [call(0, 1), call(1, 2)]
    calls[1].asked_tool = True  # e.g. invalid JSON arguments that the agent took as its answer
    run = record("s", False, calls=calls, tools=[tool(0, 0.5, 0.6)], wall=2.0)
    assert run.tool_turns() == (2, 1)
    calls[1].asked_tool = False  # a plain-text answer is not a tool turn
    assert run.tool_turns() == (1, 1)


def test_agent_metrics_aggregate_hand_made_runs() -> None:
    runs = [
        record(
            "s1",
            True,
            calls=[call(0, 1, 1000), call(2, 3, 2000)],
            tools=[tool(0, 1, 2)],
            wall=4,
            trial=0,
        ),
        record("s1", False, calls=[call(0, 1, 500)], termination="max_steps", wall=2, trial=1),
        record(
            "s2", True, calls=[call(0, 0.5, 300, reported=False)], wall=1, trial=0, category="calc"
        ),
        record("s2", True, calls=[call(0, 0.5, 300)], wall=1, trial=1, category="calc"),
    ]
    m = agent_metrics("a", runs)
    assert (m.runs, m.scenarios, m.trials, m.passes) == (4, 2, 2, 3)
    assert m.success_rate == 0.75 and m.success_ci95 == pytest.approx(wilson(3, 4))
    assert m.pass_hat_k == pytest.approx({1: 0.75, 2: 0.5})
    # tool turns: run1 turn 0 ok (turn 1 final); run2 turn 0 no tool; runs 3-4 final only
    assert (m.tool_turns, m.tool_turns_ok, m.tool_call_success_rate) == (2, 1, 0.5)
    # steps: run1 [2, 2]; run2 [2]; run3 [1]; run4 [1]
    assert m.mean_step_latency_s == pytest.approx((2 + 2 + 2 + 1 + 1) / 5)
    assert m.mean_steps == pytest.approx((2 + 1 + 1 + 1) / 4)
    assert m.mean_total_tokens == pytest.approx((3000 + 500 + 300 + 300) / 4)
    assert m.usage_reported_share == pytest.approx(4 / 5)
    assert m.mean_tool_calls == 0.25
    assert m.terminations == {"completed": 3, "max_steps": 1}
    assert m.success_by_category == {"calc": 1.0, "db": 0.5}
    assert m.p50_run_latency_s == pytest.approx(1.5)
    assert m.mean_model_s_per_step == pytest.approx((1 + 1 + 1 + 0.5 + 0.5) / 5)


def test_unjudged_runs_are_refused() -> None:
    run = record("s", True, calls=[])
    run.verdict = None
    with pytest.raises(ValueError, match="judged"):
        agent_metrics("a", [run])
