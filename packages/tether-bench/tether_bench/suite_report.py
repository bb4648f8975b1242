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
from collections.abc import Iterable
from pathlib import Path

from tether_bench.ablation_report import ablation_markdown, ablation_summary
from tether_bench.metrics import after_rejection_cell, write_metrics
from tether_bench.paired import paired, pass_k_over_seeds
from tether_bench.records import RunRecord
from tether_bench.report import write_report
from tether_bench.runner import BenchResult
from tether_bench.simulator.personas import persona_from_spec
from tether_bench.suite import SuiteResult
from tether_bench.tables import pct, rate, spread, table


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
                pct(statistics.fmean(m.tool_call_success_rate for m in metrics)),
                f"{statistics.fmean(m.mean_steps for m in metrics):.2f}",
                f"{statistics.fmean(m.mean_total_tokens for m in metrics):,.0f}",
                str(sum(m.runs for m in metrics)),
            ]
        )
    header = ["Agent", "Task success, mean ± sd (min-max) over seeds", "Tool-call success"]
    return table([*header, "Steps / run", "Tokens / run", "Runs"], rows)


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
    return table(header, rows)


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
            passed, n = rate(r for r in _records(results, agent) if getattr(r, key) == value)
            cells.append(f"{pct(passed / n)} ({n})" if n else "-")
        rows.append([value, *cells])
    return table([key.capitalize(), *suite.options.agents], rows)


def slug(spec: str) -> str:
    """A persona spec as a directory name (``strong;heed=0.5`` -> ``strong_heed-0.5``; a
    file by the persona's own name, not its path)."""
    return re.sub(r"[^\w.-]+", "_", label(spec).replace("=", "-")).strip("_") or "persona"


def label(spec: str) -> str:
    """A persona spec as the report names it: the persona's name (a file's own ``name``, or
    its stem), followed by the spec's overrides (``mine;heed=0.5``)."""
    try:
        return persona_from_spec(spec).name
    except ValueError:  # not a persona of the simulator's: shown as given
        return spec


def by_persona(suite: SuiteResult) -> str:
    """Success mean ± sd over seeds, one row per persona."""
    rows = []
    for persona in suite.options.personas:
        results = [r for (p, _), r in sorted(suite.by_seed.items()) if p == persona]
        cells = []
        for agent in suite.options.agents:
            rates = [r.metrics[agent].success_rate for r in results if agent in r.metrics]
            cells.append(spread(rates) if rates else "-")
        rows.append([label(persona), *cells])
    return table(["Persona", *suite.options.agents], rows)


def by_fault(suite: SuiteResult, *, drawn: bool = False) -> str:
    """Success of the runs in which the simulator injected each fault kind at least once;
    ``drawn``: or drew it, and the request's constrained decoding ruled it out (a fault an
    agent prevents, as opposed to one it recovers from)."""
    results = list(suite.by_seed.values())
    kinds: dict[str, dict[str, list[RunRecord]]] = defaultdict(lambda: defaultdict(list))
    keys = ("sim_faults", "sim_prevented") if drawn else ("sim_faults",)
    for record in (r for res in results for r in res.records):
        for kind in {f for key in keys for f in record.extra.get(key, []) if f}:
            kinds[kind][record.agent].append(record)
    rows = []
    for kind in sorted(kinds):
        cells = []
        for agent in suite.options.agents:
            passed, n = rate(kinds[kind][agent])
            cells.append(f"{pct(passed / n)} ({n})" if n else "-")
        rows.append([kind, *cells])
    head = "Fault kind drawn" if drawn else "Fault kind injected"
    return table([head, *suite.options.agents], rows)


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
                    pct(result.metrics[a].success_rate) if a in result.metrics else "-"
                    for a in suite.options.agents
                ),
            ]
        )
    return table(["Faults", *suite.options.agents], rows)


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
                f"{pct(own) if own is not None else '-'} / "
                f"{pct(theirs) if theirs is not None else '-'}",
            ]
        )
    header = ["peer", "both pass", f"only {agent}", "only the peer", "neither"]
    header += ["p (McNemar, exact)", f"pass^{k} over seeds, {agent} / peer"]
    return table(header, rows)


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
        parts += [
            "\nTask success of runs where a fault kind was drawn: injected, or ruled out by "
            "the request's constrained decoding:\n",
            by_fault(suite, drawn=True),
        ]
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
