"""The suite: seeds x personas, the sensitivity runs, and the aggregate tables."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import tether_bench.matching
import typer
from tether_bench.backends import BackendSpec
from tether_bench.cli import plan_bench
from tether_bench.metrics import all_metrics
from tether_bench.options import BenchOptions
from tether_bench.records import Approval, RunRecord, Verdict
from tether_bench.runner import BenchResult, RunPlan
from tether_bench.scenarios import SCENARIO_PATH
from tether_bench.simulator import FAULT_KINDS
from tether_bench.suite import run_suite
from tether_bench.suite_report import suite_markdown


def _fake_runner(calls: list[BackendSpec]):  # type: ignore[no-untyped-def]
    """Every agent passes the first scenario only; runs with seed 1 also fail it. tether
    proposes an unintended write on the second, which the operator rejects."""

    def run(plan: RunPlan, spec: BackendSpec, workers: int) -> BenchResult:
        calls.append(spec)
        records = [
            RunRecord(
                agent=agent,
                scenario_id=s.id,
                category=s.category,
                termination="completed",
                wall_s=0.1,
                verdict=Verdict(passed=i == 0 and spec.seed != 1),
                extra={"sim_faults": ["malformed_json" if i == 0 else None]},
                approvals=[Approval(tool="cancel_order", approved=False, turn=0)]
                if agent == "tether" and i == 1
                else [],
            )
            for agent in plan.agents
            for i, s in enumerate(plan.scenarios)
        ]
        metrics = all_metrics(records, plan.agents)
        return BenchResult(plan=plan, backend={}, records=records, metrics=metrics, wall_s=1.0)

    return run


def test_seeds_personas_and_sensitivity_runs() -> None:
    options = BenchOptions(agents=["tether", "gold"], seeds=[0, 1], sample=2, sensitivity=True)
    calls: list[BackendSpec] = []
    suite = run_suite(options, runner=_fake_runner(calls))
    assert sorted(suite.by_seed) == [("strong", 0), ("strong", 1)]
    assert [c.disabled_faults for c in calls[2:]] == [(k,) for k in FAULT_KINDS]
    assert all(c.seed == 0 for c in calls[2:])
    weights = calls[2].simulated_persona().fault_weights
    strong = calls[0].simulated_persona().fault_weights
    assert weights[FAULT_KINDS[0]] == 0 and strong[FAULT_KINDS[0]] > 0
    assert all(weights[k] == strong[k] for k in FAULT_KINDS[1:])

    suite.info["command"] = "tether bench --seeds 0,1 --sample 2 --sensitivity"
    text = suite_markdown(suite)
    assert text.startswith("Regenerate: `tether bench --seeds 0,1 --sample 2 --sensitivity`")
    assert "| tether | 25.0% ± 35.4 (0.0%-50.0%) |" in text  # 1/2 on seed 0, 0/2 on seed 1
    assert "| malformed_json | 50.0% (2) | 50.0% (2) |" in text
    assert f"| without {FAULT_KINDS[-1]} |" in text
    assert "| tether | 2 | 2 | 0 | 2 | 0.00 |" in text  # one rejection per seed
    assert "| gold | 0 | 0 | 0 | 0 | - |" in text


def test_scenarios_ship_inside_the_package_and_matching_stands_alone() -> None:
    assert SCENARIO_PATH.parent.parent.name == "tether_bench" and SCENARIO_PATH.exists()
    tree = ast.parse(Path(tether_bench.matching.__file__).read_text(encoding="utf-8"))
    imported = [
        n.module if isinstance(n, ast.ImportFrom) else a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.Import | ast.ImportFrom)
        for a in n.names
    ]
    assert imported and not [m for m in imported if m and m.startswith("tether_bench")]


def test_a_dry_run_checks_the_plan_and_runs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``tether bench --dry-run`` counts what the options ask for, checked as a run checks
    them, and writes nothing; an agent that does not exist is the run's own one-line error."""
    out = tmp_path / "bench-out"
    plan_bench(BenchOptions(agents=["tether", "create_agent"], seeds=[0, 1], sample=3, out=out))
    said = capsys.readouterr().out
    assert said.startswith("would run 12 runs: 2 agents (tether, create_agent) x 3 scenarios")
    assert not out.exists()
    with pytest.raises(typer.Exit) as stopped:
        plan_bench(BenchOptions(agents=["nobody"], out=out))
    assert stopped.value.exit_code == 2
