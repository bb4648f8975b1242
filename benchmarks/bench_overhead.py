"""Framework overhead per step, and peak memory, for tether and the two LangChain baselines.

Overhead: each agent runs the same scenarios on the simulator, one run at a time (so no run
waits for another's GIL). A step lasts from one model call's start to the next one's; its
overhead is that time minus the time inside the model (the HTTP call to the simulator), inside
tools (the recording registry's calls) and waiting between retries of a tool call (backoff,
reported apart): the agent framework's own work, i.e. prompt building, parsing, state
handling, callbacks. Agent construction (before the first model call) is reported apart.

Memory: a fresh process per agent runs N scenarios at --concurrency threads and reports its
peak resident set size (ru_maxrss) and the rise over the same process just before the runs
(the simulator, the seeded world template and the imports are already loaded then).

    uv run python benchmarks/bench_overhead.py
    uv run python benchmarks/bench_overhead.py --overhead-scenarios 60 --memory-scenarios 100
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tether_bench.backends import BackendSpec
from tether_bench.metrics import percentile
from tether_bench.runner import RunPlan, run_benchmark, sample_scenarios
from tether_bench.scenarios import SCENARIO_PATH, load_scenarios

AGENTS = ("tether", "agent_executor", "create_agent")
DEFAULT_SCENARIOS = SCENARIO_PATH


def rss_mb() -> float:
    """Peak resident set size of this process so far, MiB (Linux reports KiB)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024 if sys.platform != "darwin" else peak / (1024 * 1024)


def current_rss_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return rss_mb()


def overhead(scenarios_file: Path, n: int, seed: int) -> dict[str, Any]:
    """Per-step overhead, one run at a time, every agent on the same scenarios."""
    scenarios = sample_scenarios(load_scenarios(scenarios_file), n, seed)
    plan = RunPlan(agents=AGENTS, scenarios=scenarios, trials=1, concurrency=1, progress=False)
    result = run_benchmark(plan, BackendSpec(kind="sim", seed=seed).create(scenarios))
    table: dict[str, Any] = {}
    for agent in AGENTS:
        runs = [r for r in result.records if r.agent == agent]
        steps = [s for r in runs for s in r.step_latencies()]
        over = [o for r in runs for o in r.step_overheads()]
        model = sum(r.model_s for r in runs) / max(1, sum(r.steps for r in runs))
        tools = sum(r.tool_s for r in runs) / max(1, sum(r.steps for r in runs))
        waits = [w for r in runs for w in r.retry_waits()]
        setup = [r.model_calls[0].start for r in runs if r.model_calls]
        table[agent] = {
            "runs": len(runs),
            "steps": len(steps),
            "mean_step_ms": 1000 * statistics.fmean(steps),
            "mean_model_ms_per_step": 1000 * model,
            "mean_tool_ms_per_step": 1000 * tools,
            "mean_retry_wait_ms_per_step": 1000 * statistics.fmean(waits),
            "mean_overhead_ms_per_step": 1000 * statistics.fmean(over),
            "p50_overhead_ms": 1000 * percentile(over, 50),
            "p95_overhead_ms": 1000 * percentile(over, 95),
            "overhead_share_of_step": statistics.fmean(over) / statistics.fmean(steps),
            "mean_setup_ms_before_first_call": 1000 * statistics.fmean(setup),
        }
    return table


def memory_child(
    scenarios_file: Path, agents: list[str], n: int, concurrency: int, seed: int
) -> None:
    """Run in a fresh process: print one JSON line with the peak memory of the runs."""
    scenarios = sample_scenarios(load_scenarios(scenarios_file), n, seed)
    plan = RunPlan(agents=agents, scenarios=scenarios, concurrency=concurrency, progress=False)
    backend = BackendSpec(kind="sim", seed=seed).create(scenarios)
    before = current_rss_mb()
    started = time.perf_counter()
    result = run_benchmark(plan, backend)
    print(
        json.dumps(
            {
                "agent": agents[0] if len(agents) == 1 else "all three",
                "scenarios": len(scenarios),
                "runs": len(result.records),
                "concurrency": concurrency,
                "rss_before_runs_mb": round(before, 1),
                "peak_rss_mb": round(rss_mb(), 1),
                "wall_s": round(time.perf_counter() - started, 1),
            }
        )
    )


def memory(scenarios_file: Path, n: int, concurrency: int, seed: int) -> list[dict[str, Any]]:
    rows = []
    for agent in (*AGENTS, ",".join(AGENTS)):
        out = subprocess.run(
            [
                sys.executable,
                __file__,
                *("--memory-child", agent, "--scenarios", str(scenarios_file)),
                *("--memory-scenarios", str(n), "--concurrency", str(concurrency)),
                *("--seed", str(seed)),
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--scenarios", type=Path, default=DEFAULT_SCENARIOS)
    parser.add_argument("--overhead-scenarios", type=int, default=40)
    parser.add_argument("--memory-scenarios", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="Also write the figures here.")
    parser.add_argument("--memory-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        memory_child(
            args.scenarios,
            args.memory_child.split(","),
            args.memory_scenarios,
            args.concurrency,
            args.seed,
        )
        return 0

    print(f"python {platform.python_version()} on {platform.machine()}, seed {args.seed}")
    figures: dict[str, Any] = {
        "overhead": overhead(args.scenarios, args.overhead_scenarios, args.seed)
    }
    print(f"\nFramework overhead per step ({args.overhead_scenarios} scenarios, one at a time):\n")
    print(
        "| agent | steps | step ms | model ms | tools ms | retry wait ms | overhead ms "
        "(p50 / p95) | share | setup ms |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for agent, row in figures["overhead"].items():
        print(
            f"| {agent} | {row['steps']} | {row['mean_step_ms']:.1f} | "
            f"{row['mean_model_ms_per_step']:.1f} | {row['mean_tool_ms_per_step']:.1f} | "
            f"{row['mean_retry_wait_ms_per_step']:.1f} | "
            f"{row['mean_overhead_ms_per_step']:.1f} ({row['p50_overhead_ms']:.1f} / "
            f"{row['p95_overhead_ms']:.1f}) | {100 * row['overhead_share_of_step']:.0f}% | "
            f"{row['mean_setup_ms_before_first_call']:.1f} |"
        )
    figures["memory"] = memory(args.scenarios, args.memory_scenarios, args.concurrency, args.seed)
    print(
        f"\nPeak memory, {args.memory_scenarios} scenarios at concurrency {args.concurrency} "
        "(fresh process each):\n"
    )
    print("| agent | peak RSS MiB | RSS before runs MiB | rise MiB | wall s |")
    print("|---|---|---|---|---|")
    for row in figures["memory"]:
        rise = row["peak_rss_mb"] - row["rss_before_runs_mb"]
        print(
            f"| {row['agent']} | {row['peak_rss_mb']:.0f} | {row['rss_before_runs_mb']:.0f} | "
            f"{rise:.0f} | {row['wall_s']:.1f} |"
        )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
