"""Benchmark tether against AgentExecutor and create_agent, on real or simulated models.

Same model, same tools, one run, judged on the world's final state (see docs/benchmark.md).
Programmatic use::

    from tether.bench import BackendSpec, RunPlan, load_scenarios, run_benchmark, write_report

    scenarios = load_scenarios("scenarios/bench.jsonl")
    plan = RunPlan(agents=["tether", "agent_executor", "create_agent"], scenarios=scenarios)
    result = run_benchmark(plan, BackendSpec(kind="sim", seed=0).create(scenarios))
    write_report(result, "bench-out")

The command is :func:`tether.bench.cli.bench` (also as the Typer app ``bench_app``).
"""

from tether.bench.backends import BackendSpec
from tether.bench.judge import Judge, judge_run
from tether.bench.metrics import AgentMetrics, agent_metrics
from tether.bench.records import ModelCall, Outcome, RunRecord, ToolCall, Verdict
from tether.bench.report import write_report
from tether.bench.runner import BenchResult, RunPlan, run_benchmark, run_in_processes
from tether.bench.scenarios import Scenario, ScenarioFileError, load_scenarios

__all__ = [
    "AgentMetrics",
    "BackendSpec",
    "BenchResult",
    "Judge",
    "ModelCall",
    "Outcome",
    "RunPlan",
    "RunRecord",
    "Scenario",
    "ScenarioFileError",
    "ToolCall",
    "Verdict",
    "agent_metrics",
    "judge_run",
    "load_scenarios",
    "run_benchmark",
    "run_in_processes",
    "write_report",
]
