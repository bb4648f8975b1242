"""The ablation tables: what each of tether's controls buys, and what it costs in tokens, per
persona (``tether bench --ablate``; the controls are declared in :mod:`.ablation`)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tether_bench.ablation import CONTROLS, Ablation
from tether_bench.paired import Paired, RunKey, paired, passes_by_run
from tether_bench.suite import SuiteResult
from tether_bench.tables import pct, table


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
                "-" if with_ is None else pct(with_),
                "-" if without is None else pct(without),
                _signed(row.points, ".1f"),
                f"{row.pair.only_agent} / {row.pair.only_peer} of {row.runs}",
                f"{row.pair.p_value:.3g}",
                f"{_tokens(row.tokens_with)} / {_tokens(row.tokens_without)}",
                _signed(row.tokens, ",.0f"),
            ]
        )
    header = ["Control", agent, "without it", "Δ points", "runs only with / only without"]
    header += ["p (McNemar, exact)", "tokens / run, with / without", "Δ tokens / run"]
    return table(header, lines)


def ablation_agents(suite: SuiteResult) -> list[str]:
    return list(dict.fromkeys(a.agent for a in suite.ablation))


def controls_table(suite: SuiteResult) -> str:
    """What each ablated control does and which settings switch it off."""
    names = list(dict.fromkeys(a.control for a in suite.ablation))
    rows = [[name, f"`{CONTROLS[name].shown()}`", CONTROLS[name].what] for name in names]
    return table(["Control", "Switched off by", "What it does"], rows)


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
    return table(["Control", *personas], rows)


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
