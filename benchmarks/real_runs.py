"""tether's controls on recorded conversations of real agents, side by side with the caps of
AgentExecutor and create_agent on the same logs: the README's real-run table.

Every run is replayed through both of tether's faces (``tether_replay``: the loop's graph and
``create_agent`` with tether's middleware, a model and tools that give back the log). The
peers' stops are read off the same logs: AgentExecutor stops a user turn after 15 iterations
(one model reply each, its parallel calls run together; ``early_stopping_method="force"``);
create_agent with ``ModelCallLimitMiddleware(run_limit=10)`` and
``ToolCallLimitMiddleware(run_limit=10)`` stops a turn at its 11th model call or tool call.
Neither has a check that sends an answer back or a memory that answers a call.

    uv run python benchmarks/real_runs.py RUNS.jsonl.gz --tools TOOLS.json [--json]
    uv run python benchmarks/real_runs.py tests/replay/fixtures/real_runs.jsonl.gz \\
        --tools tests/replay/fixtures/real_tools.json --limit 20

Figures are per run (a run's first stop ends it), over runs with a benchmark verdict.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tether_replay import Conversation, RunOutcome, ToolFile, read_conversations, replay_one

Cut = tuple[int, bool, bool] | None
"""A peer's stop: (the logged model call it stopped at, the cut held work, ...a write)."""


@dataclass(frozen=True)
class Row:
    """One agent's figures on successful (1.0) and failed (0.0) runs."""

    agent: str
    stopped_ok: float
    cuts_work_ok: float
    cuts_write_ok: float
    sent_back_ok: float | None  # None: the agent has no such control
    final_sent_back_ok: float | None
    withheld_ok: float | None
    stale: int | None
    stopped_failed: float
    saved_failed: int


def peer_stop(run: Conversation, writes: set[str], *, replies: int, calls: int) -> Cut:
    """Where a cap of ``replies`` model calls and ``calls`` tool calls a user turn stops."""
    results = {key: value for turn in run.turns for key, value in turn.results.items()}
    done = 0
    for number, turn in enumerate(run.turns):
        called = 0
        for made, reply in enumerate(turn.replies, 1):
            done += 1
            called += len(reply.calls)
            if made > replies or called > calls:
                later = [r for t in run.turns[number + 1 :] for r in t.replies]
                cut = [*turn.replies[made - 1 :], *later]
                worked = [
                    c.name
                    for r in cut
                    for c in r.calls
                    if (res := results.get(c.id)) is not None and not res.error
                ]
                return done, bool(worked), any(name in writes for name in worked)
    return None


def _pct(part: int, whole: int) -> float:
    return round(100 * part / whole, 1) if whole else 0.0


def tether_row(agent: str, done: list[RunOutcome]) -> Row:
    ok = [r for r in done if r.reward == 1.0]
    failed = [r for r in done if r.reward == 0.0]
    saved = sum(r.calls - r.stop_call + 1 for r in failed if r.stopped and r.stop_call)
    return Row(
        agent,
        _pct(sum(r.stopped for r in ok), len(ok)),
        _pct(sum(r.cuts_work for r in ok), len(ok)),
        _pct(sum(r.cuts_write for r in ok), len(ok)),
        _pct(sum(r.final_sent_back for r in ok), len(ok)),
        _pct(sum(r.last_sent_back for r in ok), len(ok)),
        _pct(sum(r.withheld_replies > 0 for r in ok), len(ok)),
        sum(r.stale_recalls for r in done),
        _pct(sum(r.stopped for r in failed), len(failed)),
        saved,
    )


def peer_row(agent: str, runs: list[Conversation], stops: list[Cut]) -> Row:
    pairs = [(run, stop) for run, stop in zip(runs, stops, strict=True) if run.reward is not None]
    ok = [stop for run, stop in pairs if run.reward == 1.0]
    failed = [(run, stop) for run, stop in pairs if run.reward == 0.0]
    saved = sum(run.calls - stop[0] + 1 for run, stop in failed if stop)
    return Row(
        agent,
        _pct(sum(s is not None for s in ok), len(ok)),
        _pct(sum(bool(s and s[1]) for s in ok), len(ok)),
        _pct(sum(bool(s and s[2]) for s in ok), len(ok)),
        None,
        None,
        None,
        None,
        _pct(sum(s is not None for _, s in failed), len(failed)),
        saved,
    )


HEADER = (
    "| on the real runs | successful runs stopped before their end | ...losing logged work "
    "| ...losing a logged write | successful runs with an answer or reply sent back "
    "| ...the final answer | successful runs with a reply withheld | stale recalls "
    "| failed runs stopped early | failed runs' model calls saved |\n"
    "|---|---|---|---|---|---|---|---|---|---|"
)


def markdown(rows: Iterable[Row]) -> str:
    lines = [HEADER]

    def shown(value: float | None) -> str:
        return "-" if value is None else f"{value}%"

    for r in rows:
        lines.append(
            f"| {r.agent} | {r.stopped_ok}% | {r.cuts_work_ok}% | {r.cuts_write_ok}% "
            f"| {shown(r.sent_back_ok)} | {shown(r.final_sent_back_ok)} "
            f"| {shown(r.withheld_ok)} | {'-' if r.stale is None else r.stale} "
            f"| {r.stopped_failed}% | {r.saved_failed:,} |"
        )
    return "\n".join(lines)


_TOOLS: ToolFile | None = None


def _replay(job: tuple[Conversation, str]) -> RunOutcome:
    run, face = job
    assert _TOOLS is not None
    return replay_one(run, _TOOLS.specs_for(run), face=face)  # type: ignore[arg-type]


def _each(jobs: list[tuple[Conversation, str]], workers: int) -> list[RunOutcome]:
    if workers <= 1:
        return [_replay(job) for job in jobs]
    with ProcessPoolExecutor(workers) as pool:  # forked: the tools file is read once
        return list(pool.map(_replay, jobs, chunksize=8))


def main() -> None:
    global _TOOLS
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", type=Path)
    parser.add_argument("--tools", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", action="store_true", help="the rows as JSON, not markdown")
    args = parser.parse_args()
    _TOOLS = ToolFile.read(args.tools)
    runs = [r for r in read_conversations(args.runs) if r.reward is not None][: args.limit]
    started = time.perf_counter()
    rows = []
    for face in ("loop", "middleware"):
        done = _each([(run, face) for run in runs], args.workers)
        rows.append(tether_row(f"tether {face}", done))
    writes: Callable[[Conversation], set[str]] = lambda run: {  # noqa: E731
        spec.name for spec in _TOOLS.specs_for(run) if spec.side_effects
    }
    executor = [peer_stop(run, writes(run), replies=15, calls=10**9) for run in runs]
    rows.append(peer_row("AgentExecutor (15 iterations, force)", runs, executor))
    agent = [peer_stop(run, writes(run), replies=10, calls=10) for run in runs]
    rows.append(peer_row("create_agent (10 model / 10 tool calls a run)", runs, agent))
    if args.json:
        print(json.dumps([row.__dict__ for row in rows], indent=1))
    else:
        ok = sum(r.reward == 1.0 for r in runs)
        print(f"{len(runs)} runs ({ok} successful, {len(runs) - ok} failed) from {args.runs}")
        print(markdown(rows))
        print(f"\n(replayed in {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
