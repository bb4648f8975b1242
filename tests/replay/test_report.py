"""The replay report's numbers on hand-built outcomes: shares, cohorts, verdicts, and the
untrusted text it shows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from tether_replay.outcome import Point, RunOutcome
from tether_replay.report import (
    ALL,
    Summary,
    calls_saved,
    percent,
    report,
    shown,
    summaries,
    verdict_of,
    visible_json,
    write_chart,
)


def outcome(cohort: str = "a", reward: float | None = 1.0, **values: Any) -> RunOutcome:
    """A replayed run of 10 logged calls unless told otherwise."""
    values.setdefault("calls", 10)
    uid = values.pop("uid", "u")
    return RunOutcome(uid=uid, cohort=cohort, reward=reward, face="loop", turns=1, **values)


def stopped(cohort: str = "a", reward: float | None = 0.0, **values: Any) -> RunOutcome:
    values.setdefault("stop_call", 7)
    return outcome(cohort, reward, stopped=True, **values)


def find(rows: list[Summary], cohort: str, verdict: str) -> Summary:
    (row,) = [s for s in rows if s.cohort == cohort and s.verdict == verdict]
    return row


OUTCOMES = [
    outcome("a", 1.0, notes=2, final_sent_back=True, last_sent_back=True),
    outcome("a", 1.0, recalls=3, stale_recalls=1),
    stopped("a", 1.0, cause="budget", cuts_work=True, cuts_write=True),
    outcome("a", 0.0, withheld_replies=2, refusals=1),
    stopped("a", 0.0, stop_call=7, cause="repeat", cuts_work=True, notes=1),  # saves 4 of 10
    stopped("a", 0.0, stop_call=3, cause="budget", calls=4),  # saves 2 of 4
    outcome("b", None, final_sent_back=True, notes=1),
    stopped("b", None, cause="step_cap"),
]


def test_verdicts_and_calls_saved() -> None:
    assert [verdict_of(r) for r in (1.0, 0.0, 0.5, None)] == [
        "success",
        "failed",
        "failed",
        "no verdict",
    ]
    assert calls_saved(stopped(stop_call=7, calls=10)) == 4  # calls 7, 8, 9 and 10
    assert calls_saved(stopped(stop_call=1, calls=10)) == 10
    assert calls_saved(outcome(calls=10)) == 0


def test_cohorts_and_verdicts_are_split() -> None:
    rows = summaries(OUTCOMES)
    keys = [(s.cohort, s.verdict) for s in rows]
    assert keys == [
        ("a", "success"),
        ("a", "failed"),
        ("a", ALL),
        ("b", "no verdict"),
        ("b", ALL),
        (ALL, "success"),
        (ALL, "failed"),
        (ALL, "no verdict"),
        (ALL, ALL),
    ]
    assert [find(rows, ALL, v).runs for v in ("success", "failed", "no verdict", ALL)] == [
        3,
        3,
        2,
        8,
    ]


def test_shares_are_computed_right() -> None:
    rows = summaries(OUTCOMES)
    success = find(rows, "a", "success")
    assert success.share(success.stopped) == pytest.approx(100 / 3)
    assert success.share(success.cut_write, success.stopped) == 100.0
    assert success.share(success.sent_back) == pytest.approx(100 / 3)
    assert (success.recalls, success.stale_recalls) == (3, 1)
    assert success.notes_per_run == pytest.approx(2 / 3)
    failed = find(rows, "a", "failed")
    assert (failed.runs, failed.stopped, failed.cut_work, failed.cut_write) == (3, 2, 1, 0)
    assert failed.share(failed.cut_work, failed.stopped) == 50.0
    assert failed.causes == {"repeat": 1, "budget": 1}
    assert failed.share(failed.withheld) == pytest.approx(100 / 3)
    assert failed.refusals == 1
    assert (failed.saved_calls, failed.failed_calls) == (6, 24)  # 4 of 10 and 2 of 4
    whole = find(rows, ALL, ALL)
    assert whole.share(whole.stopped) == 50.0
    assert whole.causes == {"budget": 2, "repeat": 1, "step_cap": 1}
    assert whole.share(whole.sent_back) == 25.0 and whole.share(whole.final_sent_back) == 12.5
    assert whole.notes == 4 and whole.notes_per_run == 0.5


def test_empty_shares_are_none() -> None:
    (row, _) = [s for s in summaries([outcome()]) if s.cohort == "a"]
    assert row.share(row.cut_work, row.stopped) is None
    assert percent(None) == "–" and percent(33.333) == "33%"
    assert summaries([]) == []


def test_faces_are_reported_apart() -> None:
    middleware = outcome("a", 1.0)
    middleware.face = "middleware"
    rows = summaries([outcome("a", 1.0), middleware])
    assert {s.face for s in rows} == {"loop", "middleware"}
    assert all(s.runs == 1 for s in rows)


def rendered(outcomes: list[RunOutcome], points: int = 10) -> str:
    console = Console(record=True, width=200, color_system=None)
    for part in report(outcomes, points):
        console.print(part)
    return console.export_text()


def test_the_tables_show_the_numbers() -> None:
    text = rendered(OUTCOMES)
    assert "stops (loop face)" in text and "notes and checks (loop face)" in text
    assert "6 (25%)" in text  # the failed runs' calls saved
    assert "budget: 1, repeat: 1" in text or "repeat: 1, budget: 1" in text
    assert "no verdict" in text


def test_points_are_listed_for_up_to_n_runs() -> None:
    runs = [outcome(uid=f"run-{n}", points=[Point(2, "note", f"detail {n}")]) for n in range(3)]
    text = rendered(runs, points=2)
    assert "run-0" in text and "run-1" in text and "run-2" not in text
    assert "and 1 more runs with points" in text
    assert "points" not in rendered(runs, points=0).split("notes and checks")[-1]


def test_untrusted_text_is_shown_not_obeyed() -> None:
    nasty = "[bold red]x[/] \x1b]52;c;aGk=\x07 [/nope] \u202e\ud800"
    shown_text = shown(nasty)
    assert "\x1b" not in shown_text and "\u202e" not in shown_text
    assert "\\x1b]52" in shown_text and "\\u202e" in shown_text
    runs = [outcome(cohort=nasty, uid=nasty, points=[Point(1, "note", nasty)])]
    text = rendered(runs)  # a markup error here would raise
    assert "[bold red]x[/]" in text and "[/nope]" in text and "\x1b" not in text
    assert visible_json('"\x9b\u2066"') == '"\\u009b\\u2066"'


def test_long_uids_keep_their_end() -> None:
    assert shown("a" * 100 + "run:99", 20, tail=True).endswith("run:99")
    assert shown("a" * 100, 20) == "a" * 19 + "…"


def test_the_chart_is_a_png(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    path = write_chart(summaries([*OUTCOMES, outcome("$cost$ [x]", 0.0)]), tmp_path / "c.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
