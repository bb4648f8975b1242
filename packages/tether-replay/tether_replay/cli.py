"""``tether replay``: recorded agent runs through tether's controls, and what it would have done.

Mounted on ``tether`` through the ``tether.commands`` entry point (the command function).
Bad input (a missing file, an unreadable record, an unknown setting, a bad face) gets one
line on stderr and exit 2. ``--json`` writes one object per run per line and nothing else on
stdout; otherwise stdout gets the report (see :mod:`tether_replay.report`) and stderr a
progress bar when it is a terminal.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, get_args

import typer
from rich.console import Console

from tether_replay.outcome import Face, RunOutcome
from tether_replay.records import Conversation, RecordError, read_conversations
from tether_replay.report import shown, visible, visible_json

if TYPE_CHECKING:
    from multiprocessing.context import BaseContext

    from tether import AgentSettings

    from tether_replay.tools import ToolSpec

EXIT_BAD_INPUT = 2
FACES: dict[str, tuple[Face, ...]] = {
    "loop": ("loop",),
    "middleware": ("middleware",),
    "both": get_args(Face),
}

Job = tuple[Conversation, "list[ToolSpec]", "AgentSettings", tuple[Face, ...]]
"""One run to replay, with everything a worker process needs for it."""


class ReplayFailed(RuntimeError):
    """Replaying one run raised: a bug in the replay or in tether, named with the run."""


def fail(message: str, code: int = EXIT_BAD_INPUT) -> NoReturn:
    """One ``error:`` line on stderr, and exit (typer.Exit, so tether's group exits too)."""
    sys.stderr.write(f"error: {visible(' '.join(message.split()))}\n")
    sys.stderr.flush()
    raise typer.Exit(code)


Opt = typer.Option


def replay(
    runs: Annotated[
        Path,
        typer.Argument(
            metavar="RUNS", help="Recorded runs: .json, .jsonl or .jsonl.gz.", show_default=False
        ),
    ],
    tools: Annotated[
        Path | None, Opt(help="Tools file (JSON); default: tools inferred from the calls.")
    ] = None,
    face: Annotated[str, Opt(help="loop, middleware or both.")] = "loop",
    as_json: Annotated[bool, Opt("--json", help="One JSON object per run per line.")] = False,
    limit: Annotated[int | None, Opt(min=1, help="Only the first N runs.")] = None,
    sample: Annotated[
        int | None, Opt(min=1, help="N runs picked at random (--seed), kept in file order.")
    ] = None,
    seed: Annotated[int, Opt(help="Seed of --sample.")] = 0,
    workers: Annotated[
        int | None, Opt(min=1, help="Processes; default: the CPUs, at most 4 (1 for few runs).")
    ] = None,
    setting: Annotated[
        list[str] | None, Opt("--set", help="KEY=VALUE: a tether setting (repeatable).")
    ] = None,
    points: Annotated[int, Opt(min=0, help="Report: list the points of up to N runs.")] = 10,
    chart: Annotated[Path | None, Opt(help="Also write a PNG bar chart here.")] = None,
) -> None:
    """Replay recorded agent runs through tether's controls: what it would have done."""
    from tether_replay import report as reporting

    faces = FACES.get(face) or fail(f"--face takes loop, middleware or both, not {face!r}")
    settings = settings_from(setting or [])
    try:
        if chart is not None:
            reporting.check_chart()
        jobs = _jobs(chosen(runs, limit, sample, seed), tools, settings, faces)
    except (RecordError, reporting.ChartUnavailable) as exc:
        fail(str(exc))
    started = time.monotonic()
    with ProgressBar(len(jobs)) as tick:
        outcomes = collected(_replayed(jobs, workers or default_workers(len(jobs)), tick), as_json)
    if not as_json:
        source = f"tools from {shown(tools)}" if tools else "tools inferred from the calls"
        seconds = time.monotonic() - started
        heading = f"{len(jobs)} runs from {shown(runs)}, {source}, in {seconds:.1f} s"
        out = Console(highlight=False, soft_wrap=False)  # a reader gone: rich exits quietly
        for part in [heading, *reporting.report(outcomes, points)]:
            out.print(part)
    if chart is not None:
        reporting.write_chart(reporting.summaries(outcomes), chart)
        Console(stderr=True, highlight=False).print(f"wrote {shown(chart)}")


def collected(results: Generator[RunOutcome, None, None], as_json: bool) -> list[RunOutcome]:
    """Every outcome, each written as a JSON line as it comes with ``as_json``. Ctrl-C ends
    the replay (exit 130); a reader that stops reading (``| head``) ends it quietly."""
    outcomes: list[RunOutcome] = []
    try:
        for outcome in results:
            outcomes.append(outcome)
            if as_json:
                line = json.dumps(outcome.to_json(), ensure_ascii=False)
                sys.stdout.write(visible_json(line) + "\n")
                sys.stdout.flush()
    except KeyboardInterrupt:
        results.close()  # the workers' pending runs are cancelled
        fail("interrupted", 130)
    except BrokenPipeError:
        results.close()
        reader_gone()
    return outcomes


def reader_gone() -> NoReturn:
    """stdout's reader stopped reading (``| head``): not an error, and nothing more to say."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit
    raise typer.Exit(0)


def settings_from(items: Sequence[str]) -> AgentSettings:
    """tether's settings (TETHER_* variables) with the ``--set`` overrides, validated."""
    from tether import AgentSettings, SettingsError, load_settings

    overrides: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            fail(f"--set takes KEY=VALUE, not {item!r}")
        if key not in AgentSettings.model_fields:
            fail(f"unknown setting {key!r} in --set (the fields of tether's AgentSettings)")
        overrides[key] = setting_value(raw)
    try:
        return load_settings().with_overrides(overrides)
    except SettingsError as exc:
        fail(str(exc))


def setting_value(raw: str) -> Any:
    """A ``--set`` value: JSON where it is a list, an object, a boolean or null; the text
    otherwise (pydantic reads numbers from text, and a model name stays text)."""
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return raw
    return raw if isinstance(value, int | float | str) and not isinstance(value, bool) else value


def chosen(path: Path, limit: int | None, sample: int | None, seed: int) -> list[Conversation]:
    """The runs to replay: all, the first ``limit``, or ``sample`` at random in file order."""
    if not path.is_file():
        raise RecordError(f"{path}: no such file")
    conversations: list[Conversation] = list(islice(read_conversations(path), limit))
    if sample is not None and sample < len(conversations):
        picked = sorted(random.Random(seed).sample(range(len(conversations)), sample))
        conversations = [conversations[i] for i in picked]
    if not conversations:
        raise RecordError(f"{path}: holds no runs")
    return conversations


def _jobs(
    conversations: list[Conversation],
    tools: Path | None,
    settings: AgentSettings,
    faces: tuple[Face, ...],
) -> list[Job]:
    """Each run with its tools: the file's (plus those it lacks, inferred), else inferred."""
    from tether_replay.tools import ToolFile, infer_specs

    tool_file = ToolFile.read(tools) if tools is not None else None
    return [
        (c, tool_file.specs_for(c) if tool_file else infer_specs([c]), settings, faces)
        for c in conversations
    ]


def replay_job(job: Job) -> list[RunOutcome]:
    """One run through each face (in a worker process, or in this one)."""
    from tether_replay import replay_one

    conversation, specs, settings, faces = job
    try:
        return [replay_one(conversation, specs, settings, face) for face in faces]
    except Exception as exc:
        raise ReplayFailed(
            f"replaying run {conversation.uid!r} failed: {type(exc).__name__}: {exc}"
        ) from None


RUNS_PER_WORKER = 25
"""Below this many runs a process each, starting the processes costs more than it saves."""


def default_workers(runs: int) -> int:
    """The CPUs, at most 4, and no more than one per :data:`RUNS_PER_WORKER` runs."""
    return max(1, min(os.cpu_count() or 1, 4, runs // RUNS_PER_WORKER))


def _replayed(
    jobs: list[Job], workers: int, tick: Callable[[], None]
) -> Generator[RunOutcome, None, None]:
    """Every outcome, in input order; across ``workers`` processes when more than one."""
    workers = min(workers, len(jobs))
    try:
        if workers <= 1:
            for job in jobs:
                yield from replay_job(job)
                tick()
        else:
            yield from _in_processes(jobs, workers, tick)
    except ReplayFailed as exc:
        fail(str(exc), 1)
    except BrokenProcessPool as exc:
        fail(f"a replay worker process died ({exc}); try --workers 1", 1)


def _in_processes(jobs: list[Job], workers: int, tick: Callable[[], None]) -> Iterator[RunOutcome]:
    """The jobs' outcomes from a pool of worker processes, in input order. Left early (Ctrl-C
    or an error), the workers (which ignore Ctrl-C) finish the chunk in hand and the rest is
    cancelled."""
    _preload({face for job in jobs for face in job[3]})
    chunk = max(1, min(8, len(jobs) // (workers * 8)))
    context = _start_method()
    pool = ProcessPoolExecutor(workers, mp_context=context, initializer=_ignore_sigint)
    try:
        for outcomes in pool.map(replay_job, jobs, chunksize=chunk):
            yield from outcomes
            tick()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _ignore_sigint() -> None:
    """In a worker: Ctrl-C is the parent's to handle (no traceback from each worker)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _preload(faces: set[Face]) -> None:
    """Import each face's replay here, once, for the forked workers to inherit."""
    import importlib

    for face in sorted(faces):
        importlib.import_module(f"tether_replay.{face}")


def _start_method() -> BaseContext:
    """Fork where the platform forks safely (Linux): the workers start at once with tether
    already imported, where a spawned one imports it again (seconds each). This process has
    no thread of its own then (the progress bar draws without one)."""
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    fork = "fork" in methods and sys.platform.startswith("linux")
    return multiprocessing.get_context("fork" if fork else "spawn")


class ProgressBar:
    """A progress bar on stderr when it is a terminal; otherwise nothing at all."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.bar: Any = None

    def __enter__(self) -> Callable[[], None]:
        err = Console(stderr=True)
        if not err.is_terminal or self.total < 2:
            return lambda: None
        from rich.progress import MofNCompleteColumn, Progress, TimeElapsedColumn

        columns = (*Progress.get_default_columns(), MofNCompleteColumn(), TimeElapsedColumn())
        # auto_refresh off: no drawing thread, so worker processes can be forked safely
        self.bar = Progress(*columns, console=err, transient=True, auto_refresh=False)
        self.bar.start()
        task = self.bar.add_task("replaying", total=self.total)

        def tick() -> None:
            """One run done."""
            self.bar.advance(task)
            self.bar.refresh()

        self.bar.refresh()
        return tick

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()
