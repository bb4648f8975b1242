"""tether against a peer run by run: discordant runs, McNemar's exact p-value, pass^k."""

from __future__ import annotations

import math

import pytest
from tether_bench.options import BenchOptions
from tether_bench.paired import paired, pass_k_over_seeds, sign_test
from tether_bench.records import RunRecord, Verdict
from tether_bench.runner import BenchResult, RunPlan
from tether_bench.suite import SuiteResult
from tether_bench.suite_report import suite_markdown


def test_the_sign_test_is_the_exact_binomial_tail() -> None:
    # two-sided: twice P(X <= 2) for X ~ Binomial(12, 1/2)
    expected = 2 * sum(math.comb(12, i) for i in range(3)) / 2**12
    assert sign_test(10, 2) == pytest.approx(expected)
    assert sign_test(2, 10) == sign_test(10, 2)  # symmetric
    assert sign_test(5, 5) == 1.0 and sign_test(0, 0) == 1.0  # capped; no evidence
    assert sign_test(41, 0) < 1e-11


def run(agent: str, scenario: str, passed: bool, trial: int = 0) -> RunRecord:
    return RunRecord(
        agent=agent,
        scenario_id=scenario,
        category="db",
        trial=trial,
        termination="completed",
        wall_s=0.0,
        verdict=Verdict(passed=passed),
    )


# seed -> which scenarios each agent passes
PASSES = {
    0: {"tether": {"a", "b", "c"}, "peer": {"a"}},
    1: {"tether": {"a", "b"}, "peer": {"a", "c"}},
    2: {"tether": {"a", "b", "c"}, "peer": {"a"}},
}


def records() -> dict[int, list[RunRecord]]:
    return {
        seed: [
            run(agent, scenario, scenario in passes[agent])
            for agent in ("tether", "peer")
            for scenario in ("a", "b", "c", "d")
        ]
        for seed, passes in PASSES.items()
    }


def test_runs_are_paired_by_scenario_seed_and_trial() -> None:
    pair = paired(records(), "tether", "peer")
    # a: both on 3 seeds; b: only tether on 3; c: only tether on 2, only the peer on 1; d: none
    assert (pair.both, pair.only_agent, pair.only_peer, pair.neither) == (3, 5, 1, 3)
    assert pair.p_value == pytest.approx(sign_test(5, 1))


def test_a_run_only_one_agent_made_is_left_out() -> None:
    data = records()
    data[0].append(run("tether", "e", True))  # the peer never ran e
    assert paired(data, "tether", "peer") == paired(records(), "tether", "peer")


def test_pass_k_over_seeds_counts_each_scenario_over_its_seeds() -> None:
    # tether passes a and b on 3 of 3 seeds, c on 2 of 3, d on none
    assert pass_k_over_seeds(records(), "tether", 1) == pytest.approx((3 + 3 + 2 + 0) / 12)
    assert pass_k_over_seeds(records(), "tether", 3) == pytest.approx(2 / 4)
    assert pass_k_over_seeds(records(), "peer", 3) == pytest.approx(1 / 4)
    assert pass_k_over_seeds(records(), "tether", 4) is None  # fewer seeds than k


def test_the_suite_report_shows_the_paired_table() -> None:
    options = BenchOptions(agents=["tether", "peer"], seeds=[0, 1, 2])
    plan = RunPlan(agents=["tether", "peer"], scenarios=[])
    by_seed = {
        ("strong", seed): BenchResult(plan=plan, backend={}, records=rows, metrics={}, wall_s=0)
        for seed, rows in records().items()
    }
    text = suite_markdown(SuiteResult(options=options, by_seed=by_seed))
    section = text.split("run by run")[1].split("\n\n")[1]
    header, row = (line for line in section.splitlines() if line.startswith("| peer |"))
    assert "only tether" in header and "McNemar" in header
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[:5] == ["peer", "3", "5", "1", "3"]
    assert float(cells[5]) == pytest.approx(sign_test(5, 1), rel=1e-2)
    assert cells[6] == "50.0% / 25.0%"
