"""Benchmark tether against AgentExecutor and create_agent, on real or simulated models.

Same model, same tools, one run, judged on the world's final state (see docs/benchmark.md).
Programmatic use::

    from tether_bench import BackendSpec, RunPlan, load_scenarios, run_benchmark, write_report
    from tether_bench.scenarios import SCENARIO_PATH  # shipped with the package

    scenarios = load_scenarios(SCENARIO_PATH)
    plan = RunPlan(agents=["tether", "agent_executor", "create_agent"], scenarios=scenarios)
    result = run_benchmark(plan, BackendSpec(kind="sim", seed=0).create(scenarios))
    write_report(result, "bench-out")

The command is :func:`tether_bench.cli.bench` (also as the Typer app ``bench_app``).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "AgentMetrics": "tether_bench.metrics",
    "BackendSpec": "tether_bench.backends",
    "BenchResult": "tether_bench.runner",
    "Judge": "tether_bench.judge",
    "ModelCall": "tether_bench.records",
    "Outcome": "tether_bench.records",
    "RunPlan": "tether_bench.runner",
    "RunRecord": "tether_bench.records",
    "Scenario": "tether_bench.scenarios",
    "ScenarioFileError": "tether_bench.scenarios",
    "ToolCall": "tether_bench.records",
    "Verdict": "tether_bench.records",
    "agent_metrics": "tether_bench.metrics",
    "judge_run": "tether_bench.judge",
    "load_scenarios": "tether_bench.scenarios",
    "run_benchmark": "tether_bench.runner",
    "run_in_processes": "tether_bench.runner",
    "write_report": "tether_bench.report",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import on first use, so mounting the command costs the CLI no start-up time."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tether_bench' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
