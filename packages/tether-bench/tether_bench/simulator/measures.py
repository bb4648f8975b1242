"""The real runs' measures, taken the same way from the benchmark's own records.

``../calibration`` figures (docs/benchmark.md, "Calibration") are counts over real agent runs;
:func:`measure` counts the same things over simulated runs, so a persona can be fitted to
them and its residuals published. Definitions follow the figures' own:

* two calls are **identical** when the tool and the arguments (JSON, keys sorted) match;
* **repeat of the previous call**: a call identical to the run's previous call, over all
  calls after the first; split by whether that previous call failed or succeeded;
* **stickiness**: P(call i+1 = call i | call i = call i-1);
* **malformed replies**: model turns tau2-bench would reject for their format (text and a
  call together, or an empty reply), the real figure's definition;
* **no call for a native client**: model turns that leave a native tool-calling client no
  call (an empty reply, or the call written as text);
* **format fixed after one message**: of the replies that leave the client no usable call
  (broken JSON, a missing Action Input, an empty reply), the ones whose next turn was not the
  same reply again (the real figure: tau2's rejected replies fixed after its message);
* **no tool call**: runs of tasks that need a tool in which no call reached a tool.

Calls are the model's: of the registry calls one model turn made, the last (the harness
retries a transient failure in place, and those retries are not the model's), and none whose
arguments were not a JSON object (a malformed reply, counted as such, as the real figures
count a reply rejected for its format).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tether_bench.records import RunRecord, ToolCall
from tether_bench.scenarios import Scenario
from tether_bench.simulator.faults import (
    FORMAT_FAULTS,
    NATIVE_BREAKING_FAULTS,
    TAU2_FORMAT_FAULTS,
)


@dataclass(frozen=True)
class Ratio:
    k: int
    n: int

    @property
    def p(self) -> float | None:
        return self.k / self.n if self.n else None

    def __str__(self) -> str:
        return f"{self.k}/{self.n}" + (f" ({self.p:.1%})" if self.p is not None else "")


@dataclass(frozen=True)
class Target:
    """One real figure: what it measures and its count."""

    key: str
    label: str
    real: Ratio


QWEN_TARGETS = (
    Target("repeat_after_failure", "P(repeat | previous call failed)", Ratio(23, 72)),
    Target("repeat_after_success", "P(repeat | previous call succeeded)", Ratio(6, 225)),
    Target("stickiness", "P(3rd identical | 2 identical)", Ratio(13, 23)),
    Target("malformed", "replies tau2 rejects for format, per model turn", Ratio(128, 782)),
    Target("native_breaking", "replies that leave a native client no call", Ratio(47, 782)),
    Target("format_fixed", "format fixed after one message naming it", Ratio(83, 128)),
    Target("no_call", "runs with no tool call (tasks that need one)", Ratio(1, 30)),
)
"""Qwen2.5-7B-Instruct on tau2 airline (50 runs), the one 7B model of the real runs; the
format counts from benchmarks/format_faults.py."""


def _signature(call: ToolCall) -> str:
    return f"{call.tool}|{json.dumps(call.arguments, sort_keys=True, default=str)}"


def measure(records: Iterable[RunRecord], scenarios: Sequence[Scenario]) -> dict[str, Ratio]:
    """Every measure of :data:`QWEN_TARGETS` over these runs."""
    needs_tool = {s.id for s in scenarios if s.gold_actions}
    counts = dict.fromkeys(
        (
            *("after_fail", "fail", "after_ok", "ok", "third", "two", "bad", "turns"),
            *("fixed", "tau2", "native"),
        ),
        0,
    )
    no_call = runs = 0
    for record in records:
        _count_repeats(record.tool_calls, counts)
        _count_format(record.extra.get("sim_decisions") or [], counts)
        if record.scenario_id in needs_tool:
            runs += 1
            no_call += not record.tool_calls
    return {
        "repeat_after_failure": Ratio(counts["after_fail"], counts["fail"]),
        "repeat_after_success": Ratio(counts["after_ok"], counts["ok"]),
        "stickiness": Ratio(counts["third"], counts["two"]),
        "malformed": Ratio(counts["tau2"], counts["turns"]),
        "native_breaking": Ratio(counts["native"], counts["turns"]),
        "format_fixed": Ratio(counts["fixed"], counts["bad"]),
        "no_call": Ratio(no_call, runs),
    }


def model_calls(calls: Sequence[ToolCall]) -> list[ToolCall]:
    """The model's calls: the last registry call of each turn, well-formed ones only."""
    last: dict[int, ToolCall] = {}
    for call in calls:
        last[call.turn] = call
    return [c for _, c in sorted(last.items()) if isinstance(c.arguments, dict)]


def _count_repeats(registry_calls: Sequence[ToolCall], counts: dict[str, int]) -> None:
    calls = model_calls(registry_calls)
    signatures = [_signature(c) for c in calls]
    for i in range(1, len(calls)):
        same = signatures[i] == signatures[i - 1]
        key = "ok" if calls[i - 1].status == "success" else "fail"
        counts[key] += 1
        counts[f"after_{key}"] += same
        if i >= 2 and signatures[i - 1] == signatures[i - 2]:
            counts["two"] += 1
            counts["third"] += same


def _count_format(decisions: Sequence[dict[str, object]], counts: dict[str, int]) -> None:
    counts["turns"] += len(decisions)
    for i, decision in enumerate(decisions):
        counts["tau2"] += decision.get("fault") in TAU2_FORMAT_FAULTS
        counts["native"] += decision.get("fault") in NATIVE_BREAKING_FAULTS
        if decision.get("fault") in FORMAT_FAULTS:
            counts["bad"] += 1
            following = decisions[i + 1] if i + 1 < len(decisions) else None
            counts["fixed"] += following is not None and following.get("move") != "repeat"


def residuals(measured: dict[str, Ratio]) -> list[tuple[Target, Ratio, float | None]]:
    """(target, simulated, simulated minus real in points) for every target."""
    rows = []
    for target in QWEN_TARGETS:
        sim = measured[target.key]
        real_p = target.real.p or 0.0
        rows.append((target, sim, None if sim.p is None else (sim.p - real_p) * 100))
    return rows
