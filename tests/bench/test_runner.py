"""The runner, the report and the command: deterministic results, files written, clear errors."""

from __future__ import annotations

import json
from pathlib import Path

from tether_bench.agents import VARIANTS
from tether_bench.backends import BackendSpec
from tether_bench.cli import bench_app
from tether_bench.harness import Harness
from tether_bench.report import markdown, write_report
from tether_bench.runner import (
    BenchResult,
    RunPlan,
    run_benchmark,
    sample_scenarios,
    simplest_scenarios,
)
from tether_bench.scenarios import CATEGORIES, Scenario
from typer.testing import CliRunner

AGENTS = ["tether", "agent_executor", "create_agent"]
PICK = ["api-pay-01", "fault-pay-02", "impossible-missing-01"]


def bench(scenarios: list[Scenario], seed: int) -> BenchResult:
    plan = RunPlan(
        agents=AGENTS,
        scenarios=scenarios,
        trials=2,
        concurrency=4,
        progress=False,
        harness=Harness(retry_initial_delay=0.0),
    )
    spec = BackendSpec(kind="sim", seed=seed, fault_rate=0.4, fix_rate=0.6, sim_latency=False)
    return run_benchmark(plan, spec.create(scenarios))


def outline(result: BenchResult) -> list[tuple[object, ...]]:
    """What must not change between two runs with one seed (timings and ids may)."""
    return [
        (
            r.agent,
            r.scenario_id,
            r.trial,
            r.verdict.passed if r.verdict else None,
            r.termination,
            r.steps,
            tuple(
                (c.tool, json.dumps(c.arguments, sort_keys=True), c.status) for c in r.tool_calls
            ),
            tuple(r.extra["sim_faults"]),
        )
        for r in result.records
    ]


def test_same_seed_same_results_and_a_full_report(
    by_id: dict[str, Scenario], tmp_path: Path
) -> None:
    scenarios = [by_id[i] for i in PICK]
    first, second = bench(scenarios, seed=3), bench(scenarios, seed=3)
    assert outline(first) == outline(second)
    assert [r.agent for r in first.records][:: len(PICK) * 2] == AGENTS  # sorted by agent
    assert any(f for r in first.records for f in r.extra["sim_faults"])

    paths = write_report(first, tmp_path)
    names = {p.name for p in paths}
    assert {"results.json", "results.md", "success.png", "pass_k.png"} <= names
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in paths if p.suffix == ".png")
    data = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert list(data["metrics"]) == AGENTS and len(data["runs"]) == len(PICK) * 2 * 3
    assert data["backend"]["persona"]["fault_rate"] == 0.4
    assert data["metrics"]["tether"]["pass_hat_k"].keys() == {"1", "2"}
    table = markdown(first)
    assert table.startswith("| Metric | tether | agent_executor | create_agent |")
    for row in (
        "Task success (95% CI)",
        "pass^2",
        "Tool-call success",
        "Mean per-step latency",
        "Mean steps to termination",
        "Mean total tokens per run",
        "Termination",
    ):
        assert row in table


def test_samples_spread_over_categories_deterministically(scenarios: list[Scenario]) -> None:
    picked = sample_scenarios(scenarios, 14, seed=1)
    assert picked == sample_scenarios(scenarios, 14, seed=1)
    assert len({s.category for s in picked}) == len({s.category for s in scenarios})
    assert {s.category for s in scenarios} == set(CATEGORIES)
    assert len(picked) == 14
    assert [s.id for s in picked] == [s.id for s in scenarios if s in picked]


def test_the_simplest_are_one_and_two_call_plans_chosen_deterministically(
    scenarios: list[Scenario],
) -> None:
    picked = simplest_scenarios(scenarios, 12)
    assert picked == simplest_scenarios(scenarios, 12)
    assert [s.id for s in picked] == [s.id for s in scenarios if s in picked]  # file order
    calls = sorted(len(s.gold_actions) for s in picked)
    assert calls == [1] * 8 + [2] * 4
    assert all(s.expected_termination == "completed" and not s.fault_plan for s in picked)
    assert len({s.category for s in picked}) > 1  # spread, not the file's first twelve


def test_the_command_runs_and_reports(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(
        bench_app,
        [
            "--sample",
            "3",
            "--trials",
            "1",
            "--no-sim-latency",
            "--no-progress",
            "--no-charts",
            "--agents",
            "tether,agent_executor",
            "--seeds",
            "2,3",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "| Agent | Task success, mean ± sd (min-max) over seeds |" in result.stdout
    assert "| Category | tether | agent_executor |" in result.stdout
    for seed in (2, 3):
        assert (out / f"strong-seed{seed}" / "results.md").exists()
    assert (out / "suite.md").exists() and not list(out.rglob("*.png"))


def test_the_command_rejects_bad_input_clearly(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n', encoding="utf-8")
    result = CliRunner().invoke(bench_app, ["--scenarios", str(bad), "--out", str(tmp_path)])
    assert result.exit_code == 2 and "bad.jsonl:1: field 'category'" in result.output, result.output
    result = CliRunner().invoke(bench_app, ["--agents", "tether,nope", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "unknown agents ['nope']" in result.output
    result = CliRunner().invoke(bench_app, ["--backend", "ftp://x", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "sim, local or an http(s) URL" in result.output
    result = CliRunner().invoke(bench_app, ["--protocol", "xml", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "protocol" in result.output
    result = CliRunner().invoke(bench_app, ["--seeds", "0,x", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "seeds" in result.output


def test_budget_stops_count_as_partial_in_every_report(tmp_path: Path) -> None:
    """Every variant over a one-token budget: each run is a budget stop, recorded as
    ``partial`` with no answer in results.json, counted under partial in the metrics and the
    termination table, and never a pass in the suite's headline."""
    out = tmp_path / "out"
    args = ["--sample", "2", "--seeds", "0", "--token-budget", "1", "--agents", ",".join(VARIANTS)]
    flags = ["--no-sim-latency", "--no-progress", "--no-charts", "--out", str(out)]
    result = CliRunner().invoke(bench_app, [*args, *flags])
    assert result.exit_code == 0, result.output
    data = json.loads((out / "strong-seed0" / "results.json").read_text(encoding="utf-8"))
    runs = data["runs"]
    assert len(runs) == 2 * len(VARIANTS)
    for run in runs:
        assert (run["termination"], run["answer"]) == ("partial", None), run["agent"]
        assert "token budget 1" in run["termination_reason"], run["agent"]
        assert not run["verdict"]["passed"] and "no final answer" in run["verdict"]["failures"]
    for agent in VARIANTS:
        assert data["metrics"][agent]["terminations"] == {"partial": 2}, agent
    table = (out / "strong-seed0" / "results.md").read_text(encoding="utf-8")
    assert "| partial |" + " 2 |" * len(VARIANTS) in table
    assert "| completed |" not in table
    suite = (out / "suite.md").read_text(encoding="utf-8")
    for agent in VARIANTS:
        assert f"| {agent} | 0.0% ± 0.0" in suite, agent
