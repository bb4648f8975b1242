"""Small helpers every benchmark table uses: rates as percentages, Markdown tables, spread."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence

from tether_bench.records import RunRecord


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def rate(records: Iterable[RunRecord]) -> tuple[int, int]:
    runs = list(records)
    return sum(bool(r.verdict and r.verdict.passed) for r in runs), len(runs)


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def spread(values: Sequence[float]) -> str:
    """mean ± sample sd (min-max), as percentages."""
    mean = statistics.fmean(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{pct(mean)} ± {100 * sd:.1f} ({pct(min(values))}-{pct(max(values))})"
