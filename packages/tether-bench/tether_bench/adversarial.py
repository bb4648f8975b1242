"""Score the adversarial agents: the judge is sound when each passes (almost) nothing.

    python -m tether_bench.adversarial                     # all shipped scenarios, a table
    python -m tether_bench.adversarial --constant "TEXT"   # what one constant answer passes

Each adversary runs on every scenario where its behaviour differs from the gold replay's; the
gold replay itself runs on all of them and must pass every one.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass

from tether_bench.agents import BenchAgent
from tether_bench.agents.adversaries import ADVERSARIES, Adversary, WordsNoWrite
from tether_bench.agents.gold import GoldReplayAgent
from tether_bench.backends import UrlBackend
from tether_bench.judge import judge_run
from tether_bench.records import RunRecord
from tether_bench.runner import RunPlan, run_benchmark
from tether_bench.scenarios import SCENARIO_PATH, Scenario, load_scenarios

NO_MODEL = UrlBackend("http://127.0.0.1:9/v1", "unused")  # these agents never call a model


@dataclass(frozen=True)
class Score:
    agent: str
    passes: int
    runs: int
    passed_ids: tuple[str, ...]

    @property
    def rate(self) -> float:
        return self.passes / self.runs if self.runs else 0.0


def score_adversaries(scenarios: Sequence[Scenario], concurrency: int = 2) -> list[Score]:
    """Gold and every adversary, judged; one run per (agent, applicable scenario)."""
    agents: dict[str, BenchAgent] = {"gold": GoldReplayAgent()}
    applies: dict[str, set[str]] = {"gold": {s.id for s in scenarios}}
    for kind in ADVERSARIES:
        adversary: Adversary = kind(scenarios)
        agents[adversary.name] = adversary
        applies[adversary.name] = {s.id for s in scenarios if adversary.differs_from_gold(s)}
    plan = RunPlan(
        agents=list(agents), scenarios=scenarios, concurrency=concurrency, progress=False
    )
    result = run_benchmark(plan, NO_MODEL, agent_factory=agents.__getitem__)
    scores = []
    for name in agents:
        records = [r for r in result.records if r.agent == name and r.scenario_id in applies[name]]
        passed = tuple(r.scenario_id for r in records if r.verdict and r.verdict.passed)
        scores.append(Score(name, len(passed), len(records), passed))
    return scores


def constant_passes(scenarios: Sequence[Scenario], answer: str) -> list[str]:
    """Scenarios a no-tool agent answering ``answer`` passes (judged without running it: it
    leaves the world untouched, so the state matches gold exactly when gold writes nothing)."""
    passed = []
    for scenario in scenarios:
        record = RunRecord(
            agent="constant",
            scenario_id=scenario.id,
            category=scenario.category,
            answer=answer,
            termination="completed",
            wall_s=0.0,
        )
        writes = any(a.tool in WordsNoWrite.writes for a in scenario.gold_actions)
        if judge_run(scenario, record, "untouched", "gold" if writes else "untouched").passed:
            passed.append(scenario.id)
    return passed


def table(scores: Sequence[Score]) -> str:
    lines = ["| Agent | Passes | Runs | Pass rate |", "|---|---|---|---|"]
    lines += [f"| {s.agent} | {s.passes} | {s.runs} | {100 * s.rate:.1f}% |" for s in scores]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Score the adversarial agents.")
    parser.add_argument("--scenarios", default=str(SCENARIO_PATH))
    parser.add_argument("--constant", help="Only judge this constant no-tool answer.")
    args = parser.parse_args(argv)
    if args.constant is not None:
        scenarios = load_scenarios(args.scenarios)
        passed = constant_passes(scenarios, args.constant)
        print(f"{len(passed)}/{len(scenarios)} ({100 * len(passed) / len(scenarios):.1f}%)")
        print(", ".join(passed))
        return 0
    scores = score_adversaries(load_scenarios(args.scenarios))
    print(table(scores), end="")
    for score in scores:
        if score.agent != "gold" and score.passed_ids:
            print(f"{score.agent} passed: {', '.join(score.passed_ids)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
