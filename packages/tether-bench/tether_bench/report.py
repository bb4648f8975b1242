"""Write a benchmark's results: results.json (everything), results.md (tables), PNG charts.

results.json holds the plan, the backend (fault and latency models included), the metrics
and every judged run with its calls, so any number in the tables can be recomputed from it.
Its wall-clock figures (the latency columns, each call's start and end) are named in
:data:`TIMING_FIELDS`; they are measured, never decide anything, and are the only fields two
runs of the same command may differ in (:func:`without_timings` drops exactly them).
"""

from __future__ import annotations

import json
import platform
from importlib import metadata
from pathlib import Path
from typing import Any

from tether_bench.metrics import AgentMetrics, after_rejection_cell
from tether_bench.runner import BenchResult

PACKAGES = (
    "tether",
    "langchain",
    "langchain-classic",
    "langchain-core",
    "langchain-openai",
    "langgraph",
)


def versions() -> dict[str, str]:
    found = {}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "not installed"
    found["python"] = platform.python_version()
    return found


TIMING_FIELDS: dict[str, tuple[str, ...]] = {
    "": ("wall_s",),
    "metrics.*": (
        "mean_step_latency_s",
        "p50_step_latency_s",
        "p95_step_latency_s",
        "p50_run_latency_s",
        "p95_run_latency_s",
        "mean_model_s_per_step",
        "mean_tool_s_per_step",
        "mean_retry_wait_s_per_step",
        "mean_overhead_s_per_step",
    ),
    "runs[]": ("wall_s",),
    "runs[].model_calls[]": ("start", "end"),
    "runs[].tool_calls[]": ("start", "end"),
    "runs[].summary": ("model_s", "tool_s", "step_latencies"),
}
"""Where results.json holds wall-clock figures: a path (``.key``; ``*`` any key, ``[]`` each
item of a list) to the object, then the keys in it that are timings. Nothing else in the file
depends on time: the same command (same scenarios, seeds, personas, trials and options) writes
the same results.json but for these fields."""


def without_timings(payload: Any) -> Any:
    """A copy of a results.json payload without the :data:`TIMING_FIELDS`, to compare runs."""
    copy = json.loads(json.dumps(payload))
    for path, keys in TIMING_FIELDS.items():
        for target in _at(copy, [p for p in path.split(".") if p]):
            if isinstance(target, dict):
                for key in keys:
                    target.pop(key, None)
    return copy


def _at(node: Any, parts: list[str]) -> list[Any]:
    """The objects ``parts`` (a :data:`TIMING_FIELDS` path, split at dots) leads to."""
    if not parts:
        return [node]
    head, rest = parts[0], parts[1:]
    name, each = (head[:-2], True) if head.endswith("[]") else (head, False)
    if name == "*":
        children = list(node.values()) if isinstance(node, dict) else []
    else:
        child = node.get(name) if isinstance(node, dict) else None
        children = [] if child is None else [child]
    if each:
        children = [item for child in children if isinstance(child, list) for item in child]
    return [found for child in children for found in _at(child, rest)]


def results_payload(result: BenchResult) -> dict[str, Any]:
    plan = result.plan
    return {
        "plan": {
            "agents": list(plan.agents),
            "scenarios": [s.id for s in plan.scenarios],
            "toolset": plan.toolset,
            "trials": plan.trials,
            "concurrency": plan.concurrency,
            "temperature": plan.temperature,
            "max_tokens": plan.max_tokens,
        },
        "backend": result.backend,
        "info": result.info,
        "versions": versions(),
        "wall_s": round(result.wall_s, 3),
        "metrics": {name: m.model_dump(mode="json") for name, m in result.metrics.items()},
        "runs": [{**r.model_dump(mode="json"), "summary": r.summary()} for r in result.records],
    }


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def headline_rows(metrics: list[AgentMetrics], k_max: int) -> list[tuple[str, list[str]]]:
    """The headline table's rows: success, pass^k, tool calls, latency, steps, tokens."""
    rows: list[tuple[str, list[str]]] = [
        (
            "Task success (95% CI)",
            [
                f"{_pct(m.success_rate)} ({_pct(m.success_ci95[0])}-{_pct(m.success_ci95[1])})"
                for m in metrics
            ],
        ),
    ]
    if k_max > 1:
        rows.append((f"pass^{k_max}", [_pct(m.pass_hat_k.get(k_max, 0.0)) for m in metrics]))
    rows += [
        (
            "Tool-call success",
            [
                f"{_pct(m.tool_call_success_rate)} ({m.tool_turns_ok}/{m.tool_turns})"
                for m in metrics
            ],
        ),
        schema_valid_row(metrics),
        ("Mean per-step latency", [f"{m.mean_step_latency_s:.3f} s" for m in metrics]),
        (
            "Step latency p50 / p95",
            [f"{m.p50_step_latency_s:.3f} / {m.p95_step_latency_s:.3f} s" for m in metrics],
        ),
        (
            "Run latency p50 / p95",
            [f"{m.p50_run_latency_s:.2f} / {m.p95_run_latency_s:.2f} s" for m in metrics],
        ),
        ("Mean steps to termination", [f"{m.mean_steps:.2f}" for m in metrics]),
        ("Mean tool calls per run", [f"{m.mean_tool_calls:.2f}" for m in metrics]),
        ("Mean total tokens per run", [f"{m.mean_total_tokens:,.0f}" for m in metrics]),
        (
            "Framework overhead per step (under this run's load)",
            [f"{1000 * m.mean_overhead_s_per_step:.1f} ms" for m in metrics],
        ),
        ("Runs (scenarios x trials)", [f"{m.runs} ({m.scenarios} x {m.trials})" for m in metrics]),
    ]
    return rows


def write_rows(metrics: list[AgentMetrics]) -> list[tuple[str, list[str]]]:
    """The writes table's rows: what each agent tried to change, and what got through."""
    w = [m.writes for m in metrics]
    return [
        ("Writes proposed (put to the operator)", [str(x.writes_attempted) for x in w]),
        ("Unintended writes attempted (rejected)", [str(x.unintended_attempted) for x in w]),
        ("Unintended writes executed", [str(x.unintended_executed) for x in w]),
        ("Runs with a rejection", [str(x.runs_with_rejection) for x in w]),
        (
            "Model calls after the first rejection (mean per such run)",
            [after_rejection_cell(x) for x in w],
        ),
    ]


def schema_valid_row(metrics: list[AgentMetrics]) -> tuple[str, list[str]]:
    """Tool turns whose call parsed and passed its schema, right or wrong."""
    cells = [
        f"{_pct(m.schema_valid_rate)} ({m.schema_valid_turns}/{m.tool_turns})" for m in metrics
    ]
    return "Schema-valid calls", cells


def markdown(result: BenchResult) -> str:
    """The tables: headline metrics, terminations, success by category, pass^k."""
    metrics = list(result.metrics.values())
    if not metrics:
        return "No runs.\n"
    names = [m.agent for m in metrics]
    k_max = max((max(m.pass_hat_k) for m in metrics if m.pass_hat_k), default=0)
    rows = headline_rows(metrics, k_max)
    lines = [_table(["Metric", *names], [[label, *cells] for label, cells in rows])]
    lines.append("\nWrites under the operator (approval gates on every agent's write tools):\n")
    lines.append(_table(["Writes", *names], [[label, *c] for label, c in write_rows(metrics)]))
    kinds = sorted({k for m in metrics for k in m.terminations})
    lines.append("\nTermination (runs):\n")
    lines.append(
        _table(
            ["Termination", *names],
            [[k, *(str(m.terminations.get(k, 0)) for m in metrics)] for k in kinds],
        )
    )
    categories = sorted({c for m in metrics for c in m.success_by_category})
    lines.append("\nTask success by category:\n")
    lines.append(
        _table(
            ["Category", *names],
            [[c, *(_pct(m.success_by_category.get(c, 0.0)) for m in metrics)] for c in categories],
        )
    )
    if k_max > 1:
        lines.append("\npass^k:\n")
        ks = range(1, k_max + 1)
        lines.append(
            _table(
                ["k", *names],
                [[str(k), *(_pct(m.pass_hat_k.get(k, 0.0)) for m in metrics)] for k in ks],
            )
        )
    return "\n".join(lines) + "\n"


def _table(header: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(out)


def _success_chart(ax: Any, items: list[AgentMetrics], names: list[str]) -> None:
    rates = [100 * m.success_rate for m in items]
    errors = [
        [max(0.0, 100 * (m.success_rate - m.success_ci95[0])) for m in items],
        [max(0.0, 100 * (m.success_ci95[1] - m.success_rate)) for m in items],
    ]
    ax.bar(names, rates, yerr=errors, capsize=6, color="#4C72B0")
    ax.set_ylabel("task success, % (95% Wilson CI)")
    ax.set_ylim(0, 100)
    ax.set_title("Task success")


def _tool_chart(ax: Any, items: list[AgentMetrics], names: list[str]) -> None:
    ax.bar(names, [100 * m.tool_call_success_rate for m in items], color="#55A868")
    ax.set_ylabel("tool-call success, %")
    ax.set_ylim(0, 100)
    ax.set_title("Tool-call success (turns asking for a tool)")


def _latency_chart(ax: Any, items: list[AgentMetrics], names: list[str]) -> None:
    width, xs = 0.25, range(len(items))
    for offset, (label, values) in enumerate(
        [
            ("mean", [m.mean_step_latency_s for m in items]),
            ("p50", [m.p50_step_latency_s for m in items]),
            ("p95", [m.p95_step_latency_s for m in items]),
        ]
    ):
        ax.bar([x + (offset - 1) * width for x in xs], values, width, label=label)
    ax.set_xticks(list(xs), names)
    ax.set_ylabel("seconds per step")
    ax.set_title("Per-step latency")
    ax.legend()


def _terminations_chart(ax: Any, items: list[AgentMetrics], names: list[str]) -> None:
    kinds = sorted({k for m in items for k in m.terminations})
    bottom = [0.0] * len(items)
    for kind in kinds:
        values = [100 * m.terminations.get(kind, 0) / max(m.runs, 1) for m in items]
        ax.bar(names, values, bottom=bottom, label=kind)
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    ax.set_ylabel("% of runs")
    ax.set_title("How runs ended")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))


def _pass_k_chart(ax: Any, items: list[AgentMetrics], names: list[str]) -> None:
    for m in items:
        ks = sorted(m.pass_hat_k)
        ax.plot(ks, [100 * m.pass_hat_k[k] for k in ks], marker="o", label=m.agent)
    ax.set_xlabel("k")
    ax.set_ylabel("pass^k, %")
    ax.set_ylim(0, 100)
    ax.set_title("pass^k: all k trials pass")
    ax.legend()


def charts(metrics: dict[str, AgentMetrics], out: Path) -> list[Path]:
    """PNG charts: success, tool calls, latency, cost, endings.

    Drawn on bare ``Figure`` objects, never through pyplot, so writing a report neither needs
    a display nor switches the caller's backend (a notebook keeps its inline figures).
    """
    from matplotlib.figure import Figure

    def subplots(*grid: int, figsize: tuple[float, float]) -> tuple[Figure, Any]:
        fig = Figure(figsize=figsize)
        return fig, fig.subplots(*grid)

    items = list(metrics.values())
    if not items:
        return []
    names = [m.agent for m in items]
    plots: list[tuple[str, tuple[float, float], Any]] = [
        ("success.png", (6, 4), _success_chart),
        ("tool_calls.png", (6, 4), _tool_chart),
        ("latency.png", (7, 4), _latency_chart),
        ("terminations.png", (8, 4), _terminations_chart),
    ]
    if any(len(m.pass_hat_k) > 1 for m in items):
        plots.append(("pass_k.png", (6, 4), _pass_k_chart))
    written: list[Path] = []
    for name, size, draw in plots:
        fig, ax = subplots(figsize=size)
        draw(ax, items, names)
        written.append(_save(fig, out / name))
    fig, (left, right) = subplots(1, 2, figsize=(9, 4))
    left.bar(names, [m.mean_steps for m in items], color="#8172B2")
    left.set_title("Mean steps to termination")
    right.bar(names, [m.mean_total_tokens for m in items], color="#C44E52")
    right.set_title("Mean total tokens per run")
    written.append(_save(fig, out / "steps_tokens.png"))
    return written


def _save(fig: Any, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return path


def write_report(result: BenchResult, out: Path | str, *, with_charts: bool = True) -> list[Path]:
    """Write results.json, results.md and the charts into ``out``; returns the paths."""
    directory = Path(out)
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / "results.json", directory / "results.md"]
    paths[0].write_text(
        json.dumps(results_payload(result), ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    paths[1].write_text(markdown(result), encoding="utf-8")
    if with_charts:
        paths += charts(result.metrics, directory)
    return paths
