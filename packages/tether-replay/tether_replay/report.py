"""The replay report: what tether did, per cohort and overall, split by the run's verdict.

Pure functions from a list of :class:`RunOutcome` to numbers (:func:`summaries`) and from
those to rich tables (:func:`report`); nothing here replays or prints. Everything a log
wrote (uids, reasons, notes, cohort names) goes through :func:`shown` before it can reach a
terminal: a log is untrusted text, and rich markup or an escape sequence in it must be shown,
never obeyed.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import RenderableType
from rich.markup import escape
from rich.table import Table

from tether_replay.outcome import RunOutcome

VERDICTS: dict[str, float | None] = {"success": 1.0, "failed": 0.0, "no verdict": None}
"""The reward splits: the benchmark's verdict on the logged run."""

ALL = "all"

_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 controls but tab and newline, DEL, C1 (\x9b is CSI)
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # bidi controls: text that reads reordered
    "\ud800-\udfff]"  # lone surrogates: not UTF-8, so not writable
)


def visible(text: object) -> str:
    """``text`` with each unsafe character written as its Python escape (``\\x1b``)."""
    return _UNSAFE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(text))


def shown(text: object, limit: int | None = None, *, tail: bool = False) -> str:
    """Untrusted text ready for a rich console: one line, each control character written as
    its escape (:func:`visible`), at most ``limit`` characters (its end kept with ``tail``:
    a uid's end tells runs apart), rich markup escaped."""
    flat = visible(" ".join(str(text).split()))
    if limit is not None and len(flat) > limit:
        flat = "…" + flat[1 - limit :] if tail else flat[: limit - 1] + "…"
    return escape(flat)


def visible_json(text: str) -> str:
    """JSON text with each unsafe character written as a JSON escape: the same value, safe
    to write to a terminal."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def verdict_of(reward: float | None) -> str:
    """The verdict split a reward falls in (a reward between 0 and 1 counts as failed)."""
    if reward is None:
        return "no verdict"
    return "success" if reward >= 1.0 else "failed"


def calls_saved(outcome: RunOutcome) -> int:
    """Logged model calls a stop would have saved: the stop call and every one after it."""
    if not outcome.stopped or outcome.stop_call is None:
        return 0
    return max(outcome.calls - outcome.stop_call + 1, 0)


@dataclass(frozen=True)
class Summary:
    """The report's counts for one group of runs (a face, a cohort, a verdict)."""

    face: str
    cohort: str
    verdict: str
    runs: int = 0
    stopped: int = 0
    cut_work: int = 0
    cut_write: int = 0
    causes: dict[str, int] = field(default_factory=dict)
    sent_back: int = 0
    final_sent_back: int = 0
    withheld: int = 0
    recalls: int = 0
    stale_recalls: int = 0
    notes: int = 0
    refusals: int = 0
    failed_calls: int = 0
    """Logged model calls of the group's failed runs."""
    saved_calls: int = 0
    """...of which a stop would have saved (:func:`calls_saved`)."""

    def share(self, part: int, whole: int | None = None) -> float | None:
        """``part`` as a percentage of ``whole`` (the runs by default); None of nothing."""
        whole = self.runs if whole is None else whole
        return 100.0 * part / whole if whole else None

    @property
    def notes_per_run(self) -> float | None:
        return self.notes / self.runs if self.runs else None


def summarize(outcomes: Sequence[RunOutcome], face: str, cohort: str, verdict: str) -> Summary:
    """The counts for one group; calls saved are counted on its failed runs only."""
    stopped = [o for o in outcomes if o.stopped]
    failed = [o for o in outcomes if verdict_of(o.reward) == "failed"]
    return Summary(
        face=face,
        cohort=cohort,
        verdict=verdict,
        runs=len(outcomes),
        stopped=len(stopped),
        cut_work=sum(o.cuts_work for o in stopped),
        cut_write=sum(o.cuts_write for o in stopped),
        causes=dict(Counter(o.cause or "other" for o in stopped).most_common()),
        sent_back=sum(o.final_sent_back for o in outcomes),
        final_sent_back=sum(o.last_sent_back for o in outcomes),
        withheld=sum(o.withheld_replies > 0 for o in outcomes),
        recalls=sum(o.recalls for o in outcomes),
        stale_recalls=sum(o.stale_recalls for o in outcomes),
        notes=sum(o.notes for o in outcomes),
        refusals=sum(o.refusals for o in outcomes),
        failed_calls=sum(o.calls for o in failed),
        saved_calls=sum(calls_saved(o) for o in failed),
    )


def summaries(outcomes: Iterable[RunOutcome]) -> list[Summary]:
    """Per face: each cohort (in order of first appearance) split by verdict and then whole,
    and every cohort together last (cohort ``all``). A verdict without runs is left out."""
    outcomes = list(outcomes)
    rows: list[Summary] = []
    for face in dict.fromkeys(o.face for o in outcomes):
        mine = [o for o in outcomes if o.face == face]
        cohorts = list(dict.fromkeys(o.cohort for o in mine))
        for cohort, group in [(c, [o for o in mine if o.cohort == c]) for c in cohorts] + [
            (ALL, mine)
        ]:
            for verdict in VERDICTS:
                split = [o for o in group if verdict_of(o.reward) == verdict]
                if split:
                    rows.append(summarize(split, face, cohort, verdict))
            rows.append(summarize(group, face, cohort, ALL))
    return rows


# --- rendering --------------------------------------------------------------------------------

TABLES: dict[str, tuple[str, ...]] = {
    "stops": ("stopped", "…cut work", "…cut write", "calls saved", "causes"),
    "notes and checks": (
        "sent back",
        "final sent back",
        "withheld",
        "recalls (stale)",
        "notes /run",
        "refusals",
    ),
}
"""Each table's columns after cohort, verdict and runs; docs/replay.md says what each counts."""


def percent(value: float | None) -> str:
    return "–" if value is None else f"{value:.0f}%"


def cells(s: Summary) -> dict[str, str]:
    """Every column's cell for one summary."""
    saved = "–"
    if s.verdict == "failed" and s.failed_calls:
        saved = f"{s.saved_calls} ({percent(s.share(s.saved_calls, s.failed_calls))})"
    return {
        "stopped": percent(s.share(s.stopped)),
        "…cut work": percent(s.share(s.cut_work, s.stopped)),
        "…cut write": percent(s.share(s.cut_write, s.stopped)),
        "calls saved": saved,
        "causes": ", ".join(f"{shown(c)}: {n}" for c, n in s.causes.items()) or "–",
        "sent back": percent(s.share(s.sent_back)),
        "final sent back": percent(s.share(s.final_sent_back)),
        "withheld": percent(s.share(s.withheld)),
        "recalls (stale)": f"{s.recalls} ({s.stale_recalls})",
        "notes /run": "–" if s.notes_per_run is None else f"{s.notes_per_run:.2f}",
        "refusals": str(s.refusals),
    }


def summary_table(rows: Sequence[Summary], face: str, name: str) -> Table:
    """One face's table ``name``: a section per cohort, its verdict rows, then its whole."""
    table = Table(title=f"{name} ({face} face)", title_justify="left")
    table.add_column("cohort", max_width=40)
    table.add_column("verdict", no_wrap=True)
    table.add_column("runs", justify="right")
    for column in TABLES[name]:
        table.add_column(column, justify="left" if column == "causes" else "right")
    mine = _without_repeats([s for s in rows if s.face == face])
    for index, summary in enumerate(mine):
        first = index == 0 or mine[index - 1].cohort != summary.cohort
        last = index == len(mine) - 1 or mine[index + 1].cohort != summary.cohort
        shown_cells = cells(summary)
        table.add_row(
            shown(summary.cohort) if first else "",
            summary.verdict,
            str(summary.runs),
            *(shown_cells[column] for column in TABLES[name]),
            style="bold" if summary.verdict == ALL else None,
            end_section=last,
        )
    return table


def _without_repeats(rows: list[Summary]) -> list[Summary]:
    """The rows less each cohort's whole where it has one verdict (the whole repeats it)."""
    kept = []
    for index, summary in enumerate(rows):
        alone = index > 0 and rows[index - 1].cohort == summary.cohort
        alone = alone and (index < 2 or rows[index - 2].cohort != summary.cohort)
        if not (summary.verdict == ALL and alone):
            kept.append(summary)
    return kept


def points_table(outcomes: Sequence[RunOutcome], limit: int) -> Table | None:
    """The points of the first ``limit`` runs that have any; None when none has."""
    chosen = [o for o in outcomes if o.points][:limit]
    if not chosen:
        return None
    more = sum(1 for o in outcomes if o.points) - len(chosen)
    caption = f"and {more} more runs with points (--points N shows more)" if more > 0 else None
    table = Table(title="points", title_justify="left", caption=caption, caption_justify="left")
    table.add_column("run", overflow="fold")  # a uid has no spaces: folded, not cut
    for name in ("face", "verdict", "call", "what", "detail"):
        table.add_column(name, justify="right" if name == "call" else "left")
    for outcome in chosen:
        for index, point in enumerate(outcome.points):
            head = index == 0
            table.add_row(
                shown(outcome.uid, 60, tail=True) if head else "",
                outcome.face if head else "",
                verdict_of(outcome.reward) if head else "",
                str(point.call),
                point.what,
                shown(point.detail, 160),
                end_section=index == len(outcome.points) - 1,
            )
    return table


def report(outcomes: Sequence[RunOutcome], points: int = 10) -> list[RenderableType]:
    """The whole human report: the summary tables of each face, then the points."""
    rows = summaries(outcomes)
    parts: list[RenderableType] = [
        summary_table(rows, face, name)
        for face in dict.fromkeys(s.face for s in rows)
        for name in TABLES
    ]
    listed = points_table(outcomes, points) if points > 0 else None
    if listed is not None:
        parts.append(listed)
    return parts


# --- the chart --------------------------------------------------------------------------------


class ChartUnavailable(RuntimeError):
    """matplotlib is not installed (the ``chart`` extra)."""


def check_chart() -> None:
    """Fail before a long replay, not after it, when the chart cannot be drawn."""
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        raise ChartUnavailable("--chart needs matplotlib: pip install 'tether-replay[chart]'")


def write_chart(rows: Sequence[Summary], path: Path) -> Path:
    """A PNG bar chart: per face and cohort (all verdicts), the share of runs stopped, sent
    back and withheld, and the share of failed runs' calls a stop would have saved."""
    check_chart()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    wholes = [s for s in rows if s.verdict == ALL]
    failed = {(s.face, s.cohort): s for s in rows if s.verdict == "failed"}
    series = {
        "stopped": [s.share(s.stopped) or 0.0 for s in wholes],
        "sent back": [s.share(s.sent_back) or 0.0 for s in wholes],
        "withheld": [s.share(s.withheld) or 0.0 for s in wholes],
        "failed runs' calls saved": [
            (f.share(f.saved_calls, f.failed_calls) or 0.0)
            if (f := failed.get((s.face, s.cohort)))
            else 0.0
            for s in wholes
        ],
    }
    # a "$" would start matplotlib's math text: a log's text is shown as written
    labels = [f"{s.cohort[:48]} ({s.face}, {s.runs})".replace("$", r"\$") for s in wholes]
    height = 0.8 / len(series)
    figure, axes = plt.subplots(figsize=(10, 1.0 + 0.55 * len(wholes) * len(series) / 2))
    for number, (name, values) in enumerate(series.items()):
        places = [i + number * height for i in range(len(wholes))]
        axes.barh(places, values, height=height, label=name)
    axes.set_yticks([i + 0.4 - height / 2 for i in range(len(wholes))], labels, fontsize=8)
    axes.invert_yaxis()
    axes.set_xlabel("% of runs (calls saved: % of the failed runs' logged calls)")
    axes.set_title("tether replay: what tether would have done")
    axes.legend(loc="lower right", fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path
