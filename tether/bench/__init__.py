"""Benchmark tether against AgentExecutor and create_agent, on real or simulated models.

Same model, same tools, one run, judged on the world's final state (see docs/benchmark.md).
Programmatic use::

    from tether.bench import BackendSpec, RunPlan, load_scenarios, run_benchmark, write_report
    from tether.bench.scenarios import SCENARIO_PATH  # shipped with the package

    scenarios = load_scenarios(SCENARIO_PATH)
    plan = RunPlan(agents=["tether", "agent_executor", "create_agent"], scenarios=scenarios)
    result = run_benchmark(plan, BackendSpec(kind="sim", seed=0).create(scenarios))
    write_report(result, "bench-out")

The command is :func:`tether.bench.cli.bench` (also as the Typer app ``bench_app``).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "AgentMetrics": "tether.bench.metrics",
    "BackendSpec": "tether.bench.backends",
    "BenchResult": "tether.bench.runner",
    "Judge": "tether.bench.judge",
    "ModelCall": "tether.bench.records",
    "Outcome": "tether.bench.records",
    "RunPlan": "tether.bench.runner",
    "RunRecord": "tether.bench.records",
    "Scenario": "tether.bench.scenarios",
    "ScenarioFileError": "tether.bench.scenarios",
    "ToolCall": "tether.bench.records",
    "Verdict": "tether.bench.records",
    "agent_metrics": "tether.bench.metrics",
    "judge_run": "tether.bench.judge",
    "load_scenarios": "tether.bench.scenarios",
    "run_benchmark": "tether.bench.runner",
    "run_in_processes": "tether.bench.runner",
    "write_report": "tether.bench.report",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import on first use, so mounting the command costs the CLI no start-up time."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tether.bench' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
