"""How many tokens the longest gold flow needs, per agent, against the harness's budget.

    python -m tether_bench.budget

Each agent runs the scenarios with the longest gold plan on a simulator that makes no
mistakes and answers at once, with a budget too large to matter; the table shows the first
call's prompt (system prompt, tool listing and task) and the run's total, beside the default
budget. A total above the budget means the default budget cuts the clean gold flow short.
Figures are from the simulated model (its tokens are counted, not a real model's).
"""

from __future__ import annotations

from collections.abc import Sequence

from tether_bench.agents import VARIANTS
from tether_bench.backends import SimBackend
from tether_bench.harness import Harness
from tether_bench.records import RunRecord
from tether_bench.runner import RunPlan, run_benchmark
from tether_bench.scenarios import SCENARIO_PATH, Scenario, load_scenarios
from tether_bench.simulator import PERFECT, LatencyModel


def longest_flows(scenarios: Sequence[Scenario]) -> list[Scenario]:
    """The scenarios whose gold plan has the most calls."""
    longest = max(len(s.gold_actions) for s in scenarios)
    return [s for s in scenarios if len(s.gold_actions) == longest]


def measure(scenarios: Sequence[Scenario], agents: Sequence[str] = VARIANTS) -> list[RunRecord]:
    """Clean runs of the longest flows, with an unlimited budget."""
    chosen = longest_flows(scenarios)
    plan = RunPlan(
        agents=list(agents),
        scenarios=chosen,
        concurrency=2,
        progress=False,
        harness=Harness(token_budget=10**9),
    )
    backend = SimBackend(chosen, seed=0, persona=PERFECT, latency=LatencyModel.instant())
    return run_benchmark(plan, backend).records


def table(records: Sequence[RunRecord], budget: int = Harness().token_budget) -> str:
    lines = [
        "| Agent | Scenario | Gold calls | Model calls | First prompt | Run total "
        "| Default budget |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in records:
        first = r.model_calls[0].input_tokens if r.model_calls else 0
        over = " (over)" if r.total_tokens > budget else ""
        lines.append(
            f"| {r.agent} | {r.scenario_id} | {len(r.tool_calls)} | {r.steps} | {first:,} | "
            f"{r.total_tokens:,}{over} | {budget:,} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    records = measure(load_scenarios(SCENARIO_PATH))
    print(table(records), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
