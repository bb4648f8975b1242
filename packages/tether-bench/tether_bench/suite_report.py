"""The suite's tables: mean and spread over seeds, per category, persona and fault kind, and
the sensitivity to each fault kind; tokens and steps beside success.

Each seed's full report (results.json with every judged run, results.md, charts) is written
to ``<out>/<persona>-seed<N>/`` and each sensitivity run's to ``<out>/without-<kind>/``; the
aggregate tables go to ``<out>/suite.md``, headed by the command that produced them. With
``--ablate`` the ablation tables (what each of tether's controls buys, and what it costs in
tokens, per persona) go to ``<out>/ablation.md``.
"""

from __future__ import annotations

import json
import re
import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether_bench.ablation import CONTROLS, Ablation
from tether_bench.metrics import after_rejection_cell, write_metrics
from tether_bench.paired import Paired, RunKey, paired, pass_k_over_seeds, passes_by_run
from tether_bench.records import RunRecord
from tether_bench.report import write_report
from tether_bench.runner import BenchResult
from tether_bench.suite import SuiteResult


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _rate(records: Iterable[RunRecord]) -> tuple[int, int]:
    runs = list(records)
    return sum(bool(r.verdict and r.verdict.passed) for r in runs), len(runs)


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def spread(values: Sequence[float]) -> str:
    """mean ± sample sd (min-max), as percentages."""
    mean = statistics.fmean(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{_pct(mean)} ± {100 * sd:.1f} ({_pct(min(values))}-{_pct(max(values))})"


def headline(suite: SuiteResult) -> str:
    """Per agent over the first persona's seeds: success, tool calls, steps, tokens."""
    persona = suite.options.personas[0]
    results = [r for (p, _), r in sorted(suite.by_seed.items()) if p == persona]
    rows = []
    for agent in suite.options.agents:
        metrics = [r.metrics[agent] for r in results if agent in r.metrics]
        if not metrics:
            continue
        rows.append(
            [
                agent,
                spread([m.success_rate for m in metrics]),
                _pct(statistics.fmean(m.tool_call_success_rate for m in metrics)),
                f"{statistics.fmean(m.mean_steps for m in metrics):.2f}",
                f"{statistics.fmean(m.mean_total_tokens for m in metrics):,.0f}",
                str(sum(m.runs for m in metrics)),
            ]
        )
    header = ["Agent", "Task success, mean ± sd (min-max) over seeds", "Tool-call success"]
    return _table([*header, "Steps / run", "Tokens / run", "Runs"], rows)


def writes(suite: SuiteResult) -> str:
    """Per agent, pooled over the first persona's seeds: writes put to the operator, the
    unintended ones it rejected, unintended ones executed, and what a rejection cost."""
    persona = suite.options.personas[0]
    results = [r for (p, _), r in sorted(suite.by_seed.items()) if p == persona]
    rows = []
    for agent in suite.options.agents:
        w = write_metrics(_records(results, agent))
        rows.append(
            [
                agent,
                str(w.writes_attempted),
                str(w.unintended_attempted),
                str(w.unintended_executed),
                str(w.runs_with_rejection),
                after_rejection_cell(w),
            ]
        )
    header = ["Agent", "Writes proposed", "Unintended attempted (rejected)"]
    header += ["Unintended executed", "Runs with a rejection", "Model calls after it (mean)"]
    return _table(header, rows)


def _records(results: Iterable[BenchResult], agent: str) -> list[RunRecord]:
    return [r for result in results for r in result.records if r.agent == agent]


def by_key(suite: SuiteResult, key: str) -> str:
    """Success per category (pooled over the first persona's seeds), one column per agent."""
    persona = suite.options.personas[0]
    results = [r for (p, _), r in suite.by_seed.items() if p == persona]
    values = sorted({getattr(r, key) for res in results for r in res.records})
    rows = []
    for value in values:
        cells = []
        for agent in suite.options.agents:
            passed, n = _rate(r for r in _records(results, agent) if getattr(r, key) == value)
            cells.append(f"{_pct(passed / n)} ({n})" if n else "-")
        rows.append([value, *cells])
    return _table([key.capitalize(), *suite.options.agents], rows)


def slug(spec: str) -> str:
    """A persona spec as a directory name (``strong;heed=0.5`` -> ``strong_heed-0.5``)."""
    return re.sub(r"[^\w.-]+", "_", spec.replace("=", "-")).strip("_") or "persona"


def by_persona(suite: SuiteResult) -> str:
    """Success mean ± sd over seeds, one row per persona."""
    rows = []
    for persona in suite.options.personas:
        results = [r for (p, _), r in sorted(suite.by_seed.items()) if p == persona]
        cells = []
        for agent in suite.options.agents:
            rates = [r.metrics[agent].success_rate for r in results if agent in r.metrics]
            cells.append(spread(rates) if rates else "-")
        rows.append([persona, *cells])
    return _table(["Persona", *suite.options.agents], rows)


def by_fault(suite: SuiteResult) -> str:
    """Success of the runs in which the simulator injected each fault kind at least once."""
    results = list(suite.by_seed.values())
    kinds: dict[str, dict[str, list[RunRecord]]] = defaultdict(lambda: defaultdict(list))
    for record in (r for res in results for r in res.records):
        for kind in {f for f in record.extra.get("sim_faults", []) if f}:
            kinds[kind][record.agent].append(record)
    rows = []
    for kind in sorted(kinds):
        cells = []
        for agent in suite.options.agents:
            passed, n = _rate(kinds[kind][agent])
            cells.append(f"{_pct(passed / n)} ({n})" if n else "-")
        rows.append([kind, *cells])
    return _table(["Fault kind injected", *suite.options.agents], rows)


def sensitivity(suite: SuiteResult) -> str:
    """Success with every fault kind on, then with each kind off in turn (one seed)."""
    base = suite.by_seed[(suite.options.personas[0], suite.options.seeds[0])]
    rows = []
    for label, result in [
        ("all on", base),
        *((f"without {k}", r) for k, r in suite.without.items()),
    ]:
        rows.append(
            [
                label,
                *(
                    _pct(result.metrics[a].success_rate) if a in result.metrics else "-"
                    for a in suite.options.agents
                ),
            ]
        )
    return _table(["Faults", *suite.options.agents], rows)


def versus(suite: SuiteResult, agent: str = "tether") -> str:
    """``agent`` against each peer on the same (scenario, seed, trial) runs of the first
    persona: who passed which, McNemar's exact p-value, and pass^k with the seeds as trials."""
    persona = suite.options.personas[0]
    records = {seed: r.records for (p, seed), r in suite.by_seed.items() if p == persona}
    k = len(records)
    own = pass_k_over_seeds(records, agent, k)
    rows = []
    for peer in suite.options.agents:
        if peer == agent:
            continue
        pair = paired(records, agent, peer)
        theirs = pass_k_over_seeds(records, peer, k)
        rows.append(
            [
                peer,
                str(pair.both),
                str(pair.only_agent),
                str(pair.only_peer),
                str(pair.neither),
                f"{pair.p_value:.3g}",
                f"{_pct(own) if own is not None else '-'} / "
                f"{_pct(theirs) if theirs is not None else '-'}",
            ]
        )
    header = ["peer", "both pass", f"only {agent}", "only the peer", "neither"]
    header += ["p (McNemar, exact)", f"pass^{k} over seeds, {agent} / peer"]
    return _table(header, rows)


@dataclass(frozen=True)
class AblationRow:
    """One control of one tether agent under one persona: the agent against its variant
    without the control, on the runs both made (pooled over seeds)."""

    ablation: Ablation
    pair: Paired | None
    """None when the control does not apply (no variant ran)."""
    tokens_with: float | None = None
    """Mean server-reported tokens per run of the agent (on the paired runs)."""
    tokens_without: float | None = None

    @property
    def runs(self) -> int:
        p = self.pair
        return 0 if p is None else p.both + p.only_agent + p.only_peer + p.neither

    @property
    def rate_with(self) -> float | None:
        p = self.pair
        return None if p is None or not self.runs else (p.both + p.only_agent) / self.runs

    @property
    def rate_without(self) -> float | None:
        p = self.pair
        return None if p is None or not self.runs else (p.both + p.only_peer) / self.runs

    @property
    def points(self) -> float | None:
        """What the control buys: success with it minus without it, in points."""
        if self.rate_with is None or self.rate_without is None:
            return None
        return 100 * (self.rate_with - self.rate_without)

    @property
    def tokens(self) -> float | None:
        """What the control costs: tokens per run with it minus without it."""
        if self.tokens_with is None or self.tokens_without is None:
            return None
        return self.tokens_with - self.tokens_without


def ablation_rows(suite: SuiteResult, persona: str, agent: str) -> list[AblationRow]:
    """``agent`` against each of its ablation variants under ``persona``, in control order."""
    by_seed = {seed: r.records for (p, seed), r in suite.by_seed.items() if p == persona}
    runs = {
        (r.agent, r.scenario_id, seed, r.trial): r
        for seed, records in by_seed.items()
        for r in records
    }
    mine = passes_by_run(by_seed, agent)
    rows = []
    for ablation in suite.ablation:
        if ablation.agent != agent:
            continue
        if ablation.variant is None:
            rows.append(AblationRow(ablation, None))
            continue
        keys = mine.keys() & passes_by_run(by_seed, ablation.variant).keys()

        def tokens(name: str, keys: set[RunKey] = keys) -> float | None:
            spent = [runs[(name, *key)].total_tokens for key in keys]
            return statistics.fmean(spent) if spent else None

        pair = paired(by_seed, agent, ablation.variant)
        rows.append(AblationRow(ablation, pair, tokens(agent), tokens(ablation.variant)))
    return rows


def _signed(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, "+" + fmt)


def _tokens(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def ablation_table(rows: Sequence[AblationRow], agent: str) -> str:
    """One persona's ablation of ``agent``: success with and without each control, the runs
    only one of them passed, McNemar's p, and tokens per run with and without."""
    lines = []
    for row in rows:
        if row.pair is None:
            lines.append([row.ablation.control, "-", f"does not apply: {row.ablation.reason}"])
            lines[-1] += ["-"] * 5
            continue
        with_, without = row.rate_with, row.rate_without
        lines.append(
            [
                row.ablation.control,
                "-" if with_ is None else _pct(with_),
                "-" if without is None else _pct(without),
                _signed(row.points, ".1f"),
                f"{row.pair.only_agent} / {row.pair.only_peer} of {row.runs}",
                f"{row.pair.p_value:.3g}",
                f"{_tokens(row.tokens_with)} / {_tokens(row.tokens_without)}",
                _signed(row.tokens, ",.0f"),
            ]
        )
    header = ["Control", agent, "without it", "Δ points", "runs only with / only without"]
    header += ["p (McNemar, exact)", "tokens / run, with / without", "Δ tokens / run"]
    return _table(header, lines)


def ablation_agents(suite: SuiteResult) -> list[str]:
    return list(dict.fromkeys(a.agent for a in suite.ablation))


def controls_table(suite: SuiteResult) -> str:
    """What each ablated control does and which settings switch it off."""
    names = list(dict.fromkeys(a.control for a in suite.ablation))
    rows = [[name, f"`{CONTROLS[name].shown()}`", CONTROLS[name].what] for name in names]
    return _table(["Control", "Switched off by", "What it does"], rows)


def ablation_grid(suite: SuiteResult, agent: str) -> str:
    """Δ points (Δ tokens per run) of each control, one column per persona."""
    personas = suite.options.personas
    by_persona = {p: ablation_rows(suite, p, agent) for p in personas}
    rows = []
    for i, ablation in enumerate(a for a in suite.ablation if a.agent == agent):
        cells = []
        for persona in personas:
            row = by_persona[persona][i]
            cells.append(
                "n/a"
                if row.pair is None
                else f"{_signed(row.points, '.1f')} ({_signed(row.tokens, ',.0f')} tokens)"
            )
        rows.append([ablation.control, *cells])
    return _table(["Control", *personas], rows)


def ablation_markdown(suite: SuiteResult) -> str:
    """The ablation report: the controls, then per persona and tether agent what each control
    buys (Δ points: success with it minus without it) and costs (Δ tokens per run)."""
    command = suite.info.get("command", "tether bench --ablate")
    seeds = ", ".join(str(s) for s in suite.options.seeds)
    parts = [
        f"Regenerate: `{command}`\n",
        "Controls switched off, one variant each:\n",
        controls_table(suite),
    ]
    for persona in suite.options.personas:
        for agent in ablation_agents(suite):
            parts += [
                f"\nPersona `{persona}`, {agent} against itself without each control (runs "
                f"pooled over seeds {seeds}; Δ = with minus without):\n",
                ablation_table(ablation_rows(suite, persona, agent), agent),
            ]
    if len(suite.options.personas) > 1:
        for agent in ablation_agents(suite):
            parts += [
                f"\n{agent}: what each control buys per persona, Δ points (Δ tokens per run):\n",
                ablation_grid(suite, agent),
            ]
    return "\n".join(parts) + "\n"


def ablation_summary(suite: SuiteResult) -> dict[str, Any]:
    """The ablation tables' numbers: persona -> agent -> control -> figures."""
    summary: dict[str, Any] = {}
    for persona in suite.options.personas:
        for agent in ablation_agents(suite):
            summary.setdefault(persona, {})[agent] = {
                row.ablation.control: (
                    {"variant": None, "reason": row.ablation.reason}
                    if row.pair is None
                    else {
                        "variant": row.ablation.variant,
                        "runs": row.runs,
                        "with": row.rate_with,
                        "without": row.rate_without,
                        "only_with": row.pair.only_agent,
                        "only_without": row.pair.only_peer,
                        "p_value": row.pair.p_value,
                        "tokens_with": row.tokens_with,
                        "tokens_without": row.tokens_without,
                    }
                )
                for row in ablation_rows(suite, persona, agent)
            }
    return summary


def suite_markdown(suite: SuiteResult) -> str:
    command = suite.info.get("command", "tether bench")
    parts = [
        f"Regenerate: `{command}`\n",
        "Task success over seeds (first persona):\n",
        headline(suite),
    ]
    if "tether" in suite.options.agents and len(suite.options.agents) > 1:
        parts += [
            "\ntether against each peer, run by run (first persona; a run is a scenario, seed "
            "and trial both agents made):\n",
            versus(suite),
        ]
    parts += [
        "\nWrites under the operator (approval gates on every agent's write tools; first "
        "persona, runs pooled over seeds):\n",
        writes(suite),
        "\nTask success by category (runs pooled over seeds):\n",
        by_key(suite, "category"),
        "\nTask success by persona:\n",
        by_persona(suite),
    ]
    if any(r.extra.get("sim_faults") for res in suite.by_seed.values() for r in res.records):
        parts += ["\nTask success of runs where a fault kind was injected:\n", by_fault(suite)]
    if suite.without:
        parts += ["\nSensitivity: each fault kind switched off in turn (first seed):\n"]
        parts.append(sensitivity(suite))
    return "\n".join(parts) + "\n"


def write_suite(suite: SuiteResult, out: Path | str, *, with_charts: bool = True) -> list[Path]:
    """Each run's report in its own directory, then suite.md and suite.json."""
    directory = Path(out)
    directory.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    for (persona, seed), result in sorted(suite.by_seed.items()):
        result.info.update(suite.info, seed=seed, persona=persona)
        paths += write_report(
            result, directory / f"{slug(persona)}-seed{seed}", with_charts=with_charts
        )
    for kind, result in suite.without.items():
        result.info.update(suite.info, without=kind)
        paths += write_report(result, directory / f"without-{kind}", with_charts=False)
    markdown_path, json_path = directory / "suite.md", directory / "suite.json"
    markdown_path.write_text(suite_markdown(suite), encoding="utf-8")
    if suite.ablation:
        ablation_path = directory / "ablation.md"
        ablation_path.write_text(ablation_markdown(suite), encoding="utf-8")
        paths.append(ablation_path)
    summary = {
        "options": suite.options.model_dump(mode="json"),
        "info": suite.info,
        "success": {
            f"{p}-seed{s}": {a: m.success_rate for a, m in r.metrics.items()}
            for (p, s), r in sorted(suite.by_seed.items())
        },
        "without": {
            k: {a: m.success_rate for a, m in r.metrics.items()} for k, r in suite.without.items()
        },
    }
    if suite.ablation:
        summary["ablation"] = ablation_summary(suite)
    json_path.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    return [*paths, markdown_path, json_path]
