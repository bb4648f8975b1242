"""The numbers per agent, from run records alone, with the same arithmetic for every agent.

* success rate: judged passes over runs (every scenario x trial), with a 95% Wilson interval.
  Trials of one scenario share the task, so the interval is somewhat optimistic; pass^k says
  how consistent an agent is across trials.
* pass^k (tau-bench): per scenario with n trials and c passes, C(c, k) / C(n, k), averaged.
* tool-call success rate (the seed's): model turns that asked for a tool and got a valid,
  successful call, over all turns that asked for a tool; unparseable replies count as failed
  turns, and only the final answer that ended a run is not a tool turn.
* schema-valid call rate: tool turns whose call parsed and passed the tool's schema (the
  tool ran, whatever it answered), over the same tool turns; with the tool-call success rate
  it separates calls that were malformed from calls that were well-formed but wrong.
* per-step latency: a step runs from one model call's start to the next one's (or the run's
  end); mean, p50 and p95 over all steps. Framework overhead per step: the step's time minus
  time inside the model, inside tools and waiting between retries of a tool call.
* steps to termination (model calls), tool calls and server-reported tokens, per run.
* writes under the operator: write calls proposed (each put to the operator), unintended ones
  (rejected: the scenario does not call for them), unintended ones that reached the world
  anyway (a gate bypassed; must be 0), and the model calls a run made after its first
  rejection.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, Field, computed_field

from tether_bench.records import RunRecord

Z95 = 1.959963984540054


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for a binomial proportion (0, 0 when n is 0)."""
    if n <= 0:
        return 0.0, 0.0
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    # At 0/n (n/n) the bound is exactly 0 (1); floating point leaves ~1e-17 otherwise.
    low = 0.0 if successes <= 0 else max(0.0, centre - half)
    high = 1.0 if successes >= n else min(1.0, centre + half)
    return low, high


def pass_hat_k(passes_per_scenario: Sequence[tuple[int, int]], k: int) -> float | None:
    """Mean over scenarios of C(c, k) / C(n, k); None when some scenario has fewer than k runs."""
    if not passes_per_scenario or any(n < k for _, n in passes_per_scenario):
        return None
    return statistics.fmean(math.comb(c, k) / math.comb(n, k) for c, n in passes_per_scenario)


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (q in 0..100); 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _mean(values: Iterable[float]) -> float:
    items = list(values)
    return statistics.fmean(items) if items else 0.0


class WriteMetrics(BaseModel):
    """One agent's writes under the operator, summed over its runs."""

    writes_attempted: int = 0
    unintended_attempted: int = 0
    unintended_executed: int = 0
    runs_with_rejection: int = 0
    steps_after_rejection: int = 0
    """Model calls after each run's first rejection, summed over those runs."""

    @computed_field  # type: ignore[prop-decorator]  # in results.json too
    @property
    def mean_steps_after_rejection(self) -> float:
        return (
            self.steps_after_rejection / self.runs_with_rejection
            if self.runs_with_rejection
            else 0.0
        )


def after_rejection_cell(w: WriteMetrics) -> str:
    """The mean model calls after a rejection, or "-" when no run had one."""
    return f"{w.mean_steps_after_rejection:.2f}" if w.runs_with_rejection else "-"


def write_metrics(records: Iterable[RunRecord]) -> WriteMetrics:
    """Sum the write counts of ``records`` (the same arithmetic for every agent)."""
    runs = list(records)
    after = [n for r in runs if (n := r.steps_after_rejection()) is not None]
    return WriteMetrics(
        writes_attempted=sum(r.writes_attempted for r in runs),
        unintended_attempted=sum(r.unintended_writes_attempted for r in runs),
        unintended_executed=sum(r.unintended_writes_executed for r in runs),
        runs_with_rejection=len(after),
        steps_after_rejection=sum(after),
    )


class AgentMetrics(BaseModel):
    """Everything the report shows for one agent."""

    agent: str
    runs: int
    scenarios: int
    trials: int
    passes: int
    success_rate: float
    success_ci95: tuple[float, float]
    pass_hat_k: dict[int, float]
    tool_turns: int
    tool_turns_ok: int
    tool_call_success_rate: float
    schema_valid_turns: int = 0
    schema_valid_rate: float = 0.0
    """Tool turns whose call parsed and passed its tool's schema (the tool ran)."""
    mean_step_latency_s: float
    p50_step_latency_s: float
    p95_step_latency_s: float
    p50_run_latency_s: float
    p95_run_latency_s: float
    mean_steps: float
    mean_model_calls: float
    mean_tool_calls: float
    mean_total_tokens: float
    mean_input_tokens: float
    mean_output_tokens: float
    usage_reported_share: float
    mean_model_s_per_step: float
    mean_tool_s_per_step: float
    mean_retry_wait_s_per_step: float
    mean_overhead_s_per_step: float
    terminations: dict[str, int]
    success_by_category: dict[str, float]
    writes: WriteMetrics = Field(default_factory=WriteMetrics)

    def row(self) -> dict[str, Any]:
        return self.model_dump()


def agent_metrics(agent: str, records: Sequence[RunRecord]) -> AgentMetrics:
    """Aggregate one agent's judged runs."""
    runs = list(records)
    if any(r.verdict is None for r in runs):
        raise ValueError("every run must be judged before its metrics are computed")
    passed = [bool(r.verdict and r.verdict.passed) for r in runs]
    by_scenario: dict[str, list[bool]] = defaultdict(list)
    by_category: dict[str, list[bool]] = defaultdict(list)
    for record, ok in zip(runs, passed, strict=True):
        by_scenario[record.scenario_id].append(ok)
        by_category[record.category].append(ok)
    counts = [(sum(v), len(v)) for v in by_scenario.values()]
    trials = min((n for _, n in counts), default=0)
    pass_k = {k: p for k in range(1, trials + 1) if (p := pass_hat_k(counts, k)) is not None}

    asked = ok_turns = 0
    for record in runs:
        a, o = record.tool_turns()
        asked, ok_turns = asked + a, ok_turns + o
    steps = [latency for r in runs for latency in r.step_latencies()]
    overheads = [o for r in runs for o in r.step_overheads()]
    n_steps = sum(r.steps for r in runs)
    calls = [c for r in runs for c in r.model_calls]
    return AgentMetrics(
        agent=agent,
        runs=len(runs),
        scenarios=len(by_scenario),
        trials=trials,
        passes=sum(passed),
        success_rate=sum(passed) / len(runs) if runs else 0.0,
        success_ci95=wilson(sum(passed), len(runs)),
        pass_hat_k=pass_k,
        tool_turns=asked,
        tool_turns_ok=ok_turns,
        tool_call_success_rate=ok_turns / asked if asked else 0.0,
        schema_valid_turns=(valid := sum(r.schema_valid_turns() for r in runs)),
        schema_valid_rate=valid / asked if asked else 0.0,
        mean_step_latency_s=_mean(steps),
        p50_step_latency_s=percentile(steps, 50),
        p95_step_latency_s=percentile(steps, 95),
        p50_run_latency_s=percentile([r.wall_s for r in runs], 50),
        p95_run_latency_s=percentile([r.wall_s for r in runs], 95),
        mean_steps=_mean(r.steps for r in runs),
        mean_model_calls=_mean(len(r.model_calls) for r in runs),
        mean_tool_calls=_mean(len(r.tool_calls) for r in runs),
        mean_total_tokens=_mean(r.total_tokens for r in runs),
        mean_input_tokens=_mean(r.input_tokens for r in runs),
        mean_output_tokens=_mean(r.output_tokens for r in runs),
        usage_reported_share=(sum(c.usage_reported for c in calls) / len(calls)) if calls else 0.0,
        mean_model_s_per_step=sum(r.model_s for r in runs) / n_steps if n_steps else 0.0,
        mean_tool_s_per_step=sum(r.tool_s for r in runs) / n_steps if n_steps else 0.0,
        mean_retry_wait_s_per_step=_mean(w for r in runs for w in r.retry_waits()),
        mean_overhead_s_per_step=_mean(overheads),
        terminations=dict(sorted(Counter(r.termination for r in runs).items())),
        success_by_category={c: sum(v) / len(v) for c, v in sorted(by_category.items())},
        writes=write_metrics(runs),
    )


def all_metrics(records: Iterable[RunRecord], agents: Sequence[str]) -> dict[str, AgentMetrics]:
    """Metrics per agent, in the order given."""
    grouped: dict[str, list[RunRecord]] = defaultdict(list)
    for record in records:
        grouped[record.agent].append(record)
    return {agent: agent_metrics(agent, grouped[agent]) for agent in agents if grouped[agent]}
