"""Ablations: tether with each control off, beside tether in the same run, and the report."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import pytest
import typer
from tether import AgentSettings, TetherError
from tether_bench.ablation import CONTROLS, NEVER, Ablation, ablation_plan, parse_variant
from tether_bench.ablation_report import ablation_markdown, ablation_rows, controls_table
from tether_bench.agents import known_agent, make_agent
from tether_bench.agents.tether_agent import TetherAgent
from tether_bench.cli import bench, bench_app, bench_options
from tether_bench.metrics import all_metrics
from tether_bench.options import BenchOptions
from tether_bench.paired import sign_test
from tether_bench.records import ModelCall, RunRecord, Verdict
from tether_bench.runner import BenchResult, RunPlan
from tether_bench.suite import SuiteResult, run_plan
from typer.testing import CliRunner

from tests.bench.conftest import REPO

ALL = list(CONTROLS)


def options(**flags: Any) -> BenchOptions:
    """The options the command would build from these flags (nothing runs)."""
    values = {name: p.default for name, p in inspect.signature(bench).parameters.items()}
    return bench_options({**values, **flags})


def test_every_control_is_switched_off_by_valid_settings() -> None:
    defaults = AgentSettings()
    for name, control in CONTROLS.items():
        off = control.off(defaults)
        assert set(off) <= set(AgentSettings.model_fields), name
        ablated = defaults.with_overrides(off)  # validated like any override
        for setting, value in off.items():
            assert getattr(ablated, setting) == value != getattr(defaults, setting), name
        assert control.what and "|" not in control.what, name  # one table cell
    assert CONTROLS["calm_temperature"].off(defaults) == {"calm_temperature": defaults.temperature}
    assert CONTROLS["breaker"].off(defaults) == {"breaker_failures": NEVER}
    assert defaults.max_steps < NEVER


def test_the_flag_adds_one_tether_variant_per_control_in_force() -> None:
    opts = options(ablate=True, agents="tether,agent_executor")
    assert opts.ablate == ALL
    plan = ablation_plan(opts)
    assert [(a.agent, a.control) for a in plan] == [("tether", c) for c in ALL]
    # on a server the small-model profile is off: nothing to switch off
    assert plan[-1] == Ablation("tether", "small_model", None, "the small-model profile is off")
    variants = [f"tether-no_{c}" for c in ALL if c != "small_model"]
    assert [a.variant for a in plan[:-1]] == variants
    scenarios = [object()]  # the plan only carries them
    assert run_plan(opts, scenarios, plan).agents == ["tether", "agent_executor", *variants]  # type: ignore[arg-type]
    assert run_plan(opts, scenarios).agents == ["tether", "agent_executor"]  # type: ignore[arg-type]


def test_a_variant_differs_from_tether_only_by_its_overrides() -> None:
    tether = make_agent("tether")
    assert isinstance(tether, TetherAgent)
    base = tether.settings_at(temperature=0.7, approval_tools=["pay_order"]).model_dump()
    for control in ALL[:-1]:
        variant = make_agent(f"tether-no_{control}")
        assert isinstance(variant, TetherAgent) and known_agent(variant.name)
        assert (variant.name, variant.run_name, variant.ablated) == (
            f"tether-no_{control}",
            "tether",  # the same run ids, so the same tool ids, as tether's runs
            (control,),
        )
        mine = variant.settings_at(temperature=0.7, approval_tools=["pay_order"]).model_dump()
        changed = {k: v for k, v in mine.items() if base[k] != v}
        expected = {k: 0.7 if k == "calm_temperature" else v for k, v in
                    CONTROLS[control].overrides.items()}  # fmt: skip
        assert changed == expected, control
    assert tether.run_name is None and tether.ablated == ()


def test_what_applies_depends_on_the_profile_and_the_temperature() -> None:
    opts = options(agents="tether,tether_small", ablate_only="small_model,calm_temperature")
    found = {(a.agent, a.control): (a.variant, a.reason) for a in ablation_plan(opts)}
    assert found == {
        ("tether", "small_model"): (None, "the small-model profile is off"),
        ("tether", "calm_temperature"): ("tether-no_calm_temperature", None),
        ("tether_small", "small_model"): ("tether_small-no_small_model", None),
        ("tether_small", "calm_temperature"): (
            None,
            "the small-model profile samples at temperature 0",
        ),
    }
    small = make_agent("tether_small-no_small_model")
    assert isinstance(small, TetherAgent) and not small.settings_at().small_profile
    assert small.run_name == "tether_small"
    # sampling at the calm temperature already: there is nothing to switch off
    calm = options(ablate_only="calm_temperature", agents="tether", temperature=0.1)
    assert ablation_plan(calm)[0].variant is None
    assert "already off" in str(ablation_plan(calm)[0].reason)


def test_bad_ablations_are_refused() -> None:
    with pytest.raises(typer.Exit):
        options(ablate_only="breaker,nope")
    with pytest.raises(TetherError, match="needs tether"):
        ablation_plan(options(ablate=True, agents="agent_executor"))
    assert ablation_plan(options(agents="tether")) == []
    assert parse_variant("tether-no_nope") is None
    assert not known_agent("agent_executor-no_breaker") and not known_agent("tether-no_nope")
    with pytest.raises(ValueError, match="unknown control"):
        TetherAgent().without("nope")


def _run(agent: str, scenario: str, passed: bool, tokens: int) -> RunRecord:
    return RunRecord(
        agent=agent,
        scenario_id=scenario,
        category="db",
        termination="completed",
        wall_s=0.0,
        verdict=Verdict(passed=passed),
        model_calls=[ModelCall(start=0, end=1, total_tokens=tokens, usage_reported=True)],
    )


# persona -> seed -> agent -> scenarios passed; tether spends 100 tokens a run, its variants 80
PASSES = {
    "strong": {
        0: {"tether": "abc", "tether-no_breaker": "a", "tether-no_repeat_note": "abc"},
        1: {"tether": "ab", "tether-no_breaker": "ac", "tether-no_repeat_note": "abc"},
    },
    "strong;heed=0.9": {
        0: {"tether": "abcd", "tether-no_breaker": "abcd", "tether-no_repeat_note": "abc"},
        1: {"tether": "abcd", "tether-no_breaker": "abcd", "tether-no_repeat_note": "abc"},
    },
}
SYNTHETIC = [
    Ablation("tether", "repeat_note", "tether-no_repeat_note"),
    Ablation("tether", "breaker", "tether-no_breaker"),
    Ablation("tether", "small_model", None, "the small-model profile is off"),
]


def synthetic_suite() -> SuiteResult:
    agents = ["tether", "tether-no_repeat_note", "tether-no_breaker"]
    by_seed = {}
    for persona, seeds in PASSES.items():
        for seed, passes in seeds.items():
            records = [
                _run(agent, s, s in passes[agent], 100 if agent == "tether" else 80)
                for agent in agents
                for s in "abcd"
            ]
            plan = RunPlan(agents=agents, scenarios=[])
            metrics = all_metrics(records, agents)
            by_seed[persona, seed] = BenchResult(plan, {}, records, metrics, wall_s=1.0)
    opts = BenchOptions(agents=["tether"], seeds=[0, 1], personas=list(PASSES), ablate=ALL)
    return SuiteResult(options=opts, by_seed=by_seed, ablation=SYNTHETIC)


def test_the_report_pairs_tether_with_each_variant_run_by_run() -> None:
    suite = synthetic_suite()
    repeat, breaker, small = ablation_rows(suite, "strong", "tether")
    # breaker, 8 runs: a both x2; b only tether x2; c only tether (seed 0), only without (1)
    pair = breaker.pair
    assert pair is not None
    assert (pair.both, pair.only_agent, pair.only_peer, pair.neither) == (2, 3, 1, 2)
    assert breaker.runs == 8 and breaker.rate_with == 5 / 8 and breaker.rate_without == 3 / 8
    assert breaker.points == pytest.approx(25.0)
    assert pair.p_value == pytest.approx(sign_test(3, 1))
    assert (breaker.tokens_with, breaker.tokens_without, breaker.tokens) == (100, 80, 20)
    assert repeat.points == pytest.approx(-12.5)  # without repeat notes it passes c on seed 1
    assert small.pair is None and small.points is None and small.runs == 0

    text = ablation_markdown(suite)
    assert "| breaker | `breaker_failures=1000` |" in text  # the controls table
    assert "| breaker | 62.5% | 37.5% | +25.0 | 3 / 1 of 8 | 0.625 | 100 / 80 | +20 |" in text
    assert "| repeat_note | 62.5% | 75.0% | -12.5 | 0 / 1 of 8 | 1 | 100 / 80 | +20 |" in text
    assert "| small_model | - | does not apply: the small-model profile is off |" in text
    assert "Persona `strong;heed=0.9`, tether against itself" in text
    # one column per persona (grid cell): what each control buys there, and its token cost
    assert "| Control | strong | strong;heed=0.9 |" in text
    assert "| repeat_note | -12.5 (+20 tokens) | +25.0 (+20 tokens) |" in text
    assert "| small_model | n/a | n/a |" in text


def test_a_tiny_ablation_run_writes_the_table(tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ["--ablate", "--simplest", "1", "--seeds", "0", "--agents", "tether"]
    args += ["--no-sim-latency", "--workers", "1", "--concurrency", "8"]
    result = CliRunner().invoke(
        bench_app, [*args, "--no-progress", "--no-charts", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    table = (out / "ablation.md").read_text(encoding="utf-8")
    assert "Ablation (also in ablation.md)" in result.stdout
    for control in ALL:
        assert f"\n| {control} |" in table, control
    runs = json.loads((out / "strong-seed0" / "results.json").read_text(encoding="utf-8"))["runs"]
    assert sorted(r["agent"] for r in runs) == sorted(
        ["tether", *(f"tether-no_{c}" for c in ALL[:-1])]
    )
    summary = json.loads((out / "suite.json").read_text(encoding="utf-8"))
    assert summary["ablation"]["strong"]["tether"]["breaker"]["runs"] == 1
    assert summary["info"]["ablated"]["tether-no_breaker"] == "breaker_failures=1000"


def test_the_docs_list_the_controls_as_the_table_says() -> None:
    everything = SuiteResult(
        options=BenchOptions(), by_seed={}, ablation=[Ablation("tether", c, None) for c in ALL]
    )
    table = controls_table(everything)
    for doc in ("docs/results/benchmark.md", "docs/benchmark.md"):
        assert table in (REPO / doc).read_text(encoding="utf-8"), doc
