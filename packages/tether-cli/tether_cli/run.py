"""``tether run``: run the agent on a task, or pick a saved run up (answering its approval).

The flags only fill a :class:`~tether_cli.run_options.RunOptions`; :func:`run_agent` takes
that one object and does the rest.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from tether import ModelCallError, TetherError

from tether_cli.console import TracePrinter
from tether_cli.output import finish
from tether_cli.run_options import RunOptions
from tether_cli.visible import visible

if TYPE_CHECKING:
    from tether import Agent, RunResult

err = Console(stderr=True, highlight=False, soft_wrap=True)
EXIT_INTERRUPTED = 130  # the shell's code for a process stopped by SIGINT
Opt = typer.Option


def run(  # one line per flag; the flags only fill RunOptions
    task: Annotated[str | None, typer.Argument(help="What the agent should do.")] = None,
    thread: Annotated[
        str | None, Opt(help="Thread id: names a new run, or resumes a saved one.")
    ] = None,
    yes: Annotated[bool, Opt("--yes", help="Approve every gated call.")] = False,
    approve: Annotated[
        bool, Opt("--approve", help="Approve the call the run is waiting on.")
    ] = False,
    reject: Annotated[
        str | None, Opt("--reject", metavar="MESSAGE", help="Reject the waiting call; tell why.")
    ] = None,
    edit: Annotated[
        str | None, Opt("--edit", metavar="JSON", help="Run the waiting call with these arguments.")
    ] = None,
    as_json: Annotated[bool, Opt("--json", help="Print the result as JSON.")] = False,
    tools: Annotated[
        str | None,
        Opt(help="Toolset: an installed name (tether toolsets) or a module; default: none."),
    ] = None,
    data_dir: Annotated[
        Path | None, Opt(help="Where the toolset keeps its data (default ./data).")
    ] = None,
    store: Annotated[
        str | None, Opt(envvar="TETHER_STORE", help="Run store: SQLite path or postgres:// URL.")
    ] = None,
    world_db: Annotated[
        str | None,
        Opt(envvar="TETHER_WORLD_DB", help="The toolset's database URL (e.g. postgres://...)."),
    ] = None,
    base_url: Annotated[
        str | None, Opt(help="OpenAI-compatible endpoint; default: embedded model.")
    ] = None,
    model: Annotated[str | None, Opt(help="Model name on the server.")] = None,
    protocol: Annotated[str | None, Opt(help="react, json_schema or native.")] = None,
    max_steps: Annotated[int | None, Opt(min=1, help="Step cap.")] = None,
    token_budget: Annotated[int | None, Opt(min=1, help="Token budget.")] = None,
    switch_model: Annotated[
        bool,
        Opt(
            "--switch-model",
            help="Resume on another --base-url, --model, --protocol or --tools than the run "
            "was saved with (without it, such a resume is refused).",
        ),
    ] = False,
) -> None:
    """Run the agent on TASK (or resume --thread) and print each step as it happens.

    A run waiting for approval is answered with --approve, --reject MESSAGE or --edit JSON,
    --yes (approve every call), or at the terminal (Enter alone decides nothing); without
    any, it stays saved (exit 3). A saved run remembers its endpoint, model, protocol and
    toolset (never an API key): a resume uses them when the flags are left out.
    """
    run_agent(RunOptions.from_flags(**locals()))


def run_agent(options: RunOptions) -> None:
    """Run or resume what ``options`` asks for, answer approvals, and exit with the outcome."""
    from tether import ToolRegistry, load_settings
    from tether.control import open_run_store

    from tether_cli.endpoint import applied, remember
    from tether_cli.toolsets import load_toolset

    settings = load_settings(**options.settings_overrides())  # bad flags: before any store
    with open_run_store(options.store) as run_store, ExitStack() as toolsets:
        options, settings, endpoint = applied(options, settings, run_store)
        again, note = options.resume_command(), options.resume_note()
        registry = ToolRegistry()
        if options.tools is not None:
            toolset = load_toolset(options.tools, options.data_dir, options.world_db)
            toolsets.callback(toolset.close)
            registry = toolset.registry()
        from tether import Agent  # after the databases: one that is down fails fast

        agent = remember(Agent(settings, store=run_store, registry=registry), endpoint)
        said = visible(f"run saved as thread {options.thread}; resume with: {again}")
        said += f" ({note})" if note else ""
        with stop_on_ctrl_c(said), hint_on_not_found(settings.base_url):
            result = answer_until_done(agent, options)
            trace = agent.trace(options.thread) if options.as_json else []
    thread = escape(visible(options.thread))
    if result.pending is not None:
        err.print(
            f"[yellow]waiting for approval:[/yellow] run saved as thread {thread}; answer "
            f"with: {escape(visible(again))} --approve (or --reject MESSAGE, --edit JSON)"
            + (f"; {note}" if note else "")
        )
    elif not options.as_json:
        err.print(f"[dim]saved as thread {thread} (tether runs show {thread})")
    saved = {"thread": options.thread, "pending": result.pending}
    finish(dict(result.state), options.as_json, trace, saved)


def answer_until_done(agent: Agent, options: RunOptions) -> RunResult:
    """Drive the run and answer each approval it asks for; a run nobody can answer is
    returned still waiting (it exits 3)."""
    answers, context = options.answers(), options.limits() or None
    result, printer = drive(agent, options)
    while result.pending is not None:
        answer = answers.answer(result.pending, agent.registry, err)
        if answer is None:
            return result
        result = agent.resume(options.thread, answer, context=context, observer=printer)
    return result


def drive(agent: Agent, options: RunOptions) -> tuple[RunResult, TracePrinter | None]:
    """Start the run, or pick a saved one up: print it, and continue it unless it waits."""
    thread_id, context = options.thread, options.limits() or None
    if options.task is not None:
        printer = None if options.as_json else TracePrinter()
        result = agent.run(options.task, thread_id=thread_id, context=context, observer=printer)
        return result, printer
    current = agent.status(thread_id)
    if current.pending is None and options.answers().decides():
        raise TetherError(
            f"run {thread_id} is not waiting for approval ({current.status}): there is no call "
            "for --approve, --reject or --edit to answer"
        )
    spent = current.usage["total_tokens"]
    printer = None if options.as_json else TracePrinter(tokens=spent)  # the count continues
    if current.pending is None and current.status == "running":
        return agent.resume(thread_id, context=context, observer=printer), printer
    return current, printer


@contextmanager
def stop_on_ctrl_c(message: str) -> Iterator[None]:
    """Ctrl-C stops at once and says how to resume.

    LangGraph runs a step on a worker thread and, on KeyboardInterrupt, waits for it to end,
    which for a model call means the whole generation (up to request_timeout). Every finished
    step is already saved (durability "sync"), so the process exits without waiting; resuming
    redoes only the step that was cut short.
    """

    def stop(signum: int, frame: FrameType | None) -> None:
        sys.stdout.flush()
        sys.stderr.write(f"\ninterrupted: {message}\n")
        sys.stderr.flush()
        os._exit(EXIT_INTERRUPTED)

    previous = signal.signal(signal.SIGINT, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextmanager
def hint_on_not_found(base_url: str | None) -> Iterator[None]:
    """A 404 from a base URL whose path lacks ``/v1`` says which URL was probably meant
    (OpenAI-compatible servers answer under ``/v1``; a bare 404 told nothing)."""
    try:
        yield
    except ModelCallError as exc:
        if base_url is None or getattr(exc.__cause__, "status_code", None) != 404:
            raise
        import httpx

        url = httpx.URL(base_url)
        if "/v1" in url.path:
            raise
        meant = url.copy_with(path=url.path.rstrip("/") + "/v1", query=None, fragment=None)
        from tether.dburl import redacted

        raise TetherError(f"{exc} (did you mean --base-url {redacted(str(meant))}?)") from exc
