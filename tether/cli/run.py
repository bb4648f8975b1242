"""``tether run``: run the agent on a task, or pick a saved run up (answering its approval)."""

from __future__ import annotations

import os
import shlex
import signal
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from tether.cli.approval_prompt import Answers, parse_edit_json
from tether.cli.output import EXIT_WAITING, finish
from tether.console import TracePrinter
from tether.errors import TetherError

if TYPE_CHECKING:
    from tether.agent import Agent, RunResult

err = Console(stderr=True, highlight=False, soft_wrap=True)
EXIT_INTERRUPTED = 130  # the shell's code for a process stopped by SIGINT


def run(
    task: Annotated[str | None, typer.Argument(help="What the agent should do.")] = None,
    thread: Annotated[
        str | None, typer.Option(help="Thread id: names a new run, or resumes a saved one.")
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", help="Approve every gated call.")] = False,
    approve: Annotated[
        bool, typer.Option("--approve", help="Approve the call the run is waiting on.")
    ] = False,
    reject: Annotated[
        str | None,
        typer.Option("--reject", metavar="MESSAGE", help="Reject the waiting call; tell why."),
    ] = None,
    edit: Annotated[
        str | None,
        typer.Option("--edit", metavar="JSON", help="Run the waiting call with these arguments."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    tools: Annotated[
        str, typer.Option(help="Module that provides the tools (README: toolsets).")
    ] = "tether.world",
    data_dir: Annotated[
        Path | None, typer.Option(help="Where the toolset keeps its data (default ./data).")
    ] = None,
    store: Annotated[
        str | None,
        typer.Option(envvar="TETHER_STORE", help="Run store: SQLite path or postgres:// URL."),
    ] = None,
    world_db: Annotated[
        str | None,
        typer.Option(
            envvar="TETHER_WORLD_DB", help="The toolset's database URL (e.g. postgres://...)."
        ),
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible endpoint; default: embedded model.")
    ] = None,
    model: Annotated[str | None, typer.Option(help="Model name on the server.")] = None,
    protocol: Annotated[str | None, typer.Option(help="react, json_schema or native.")] = None,
    max_iters: Annotated[int | None, typer.Option(min=1, help="Step cap.")] = None,
    token_budget: Annotated[int | None, typer.Option(min=1, help="Token budget.")] = None,
) -> None:
    """Run the agent on TASK (or resume --thread) and print each step as it happens.

    A run waiting for approval is answered with --approve, --reject MESSAGE or --edit JSON,
    --yes (approve every call), or at the terminal; without any, it stays saved (exit 3).
    """
    answers = Answers(yes, approve, reject, parse_edit_json(edit) if edit is not None else None)
    if task is None and thread is None:
        raise TetherError("give a TASK, or --thread ID to resume a saved run")
    from tether.agent import Agent
    from tether.control.store import open_run_store
    from tether.settings import load_settings
    from tether.toolsets import load_toolset

    endpoint = {"base_url": base_url, "model": model, "protocol": protocol}
    given = {"max_iters": max_iters, "token_budget": token_budget}
    limits = {k: v for k, v in given.items() if v is not None}  # 0 is refused by the options
    settings = load_settings(**{k: v for k, v in endpoint.items() if v is not None}, **limits)
    thread_id = thread or uuid.uuid4().hex
    again = resume_command(
        thread_id, tools=tools, data_dir=data_dir, store=store, world_db=world_db
    )
    with open_run_store(store) as run_store:
        agent = Agent(
            settings, store=run_store, registry=load_toolset(tools, data_dir, world_db).registry()
        )
        with stop_on_ctrl_c(f"run saved as thread {thread_id}; resume with: {again}"):
            result, printer = drive(agent, task, thread_id, limits or None, as_json)
            while result.pending is not None:
                answer = answers.answer(result.pending, agent.registry, err)
                if answer is None:
                    err.print(
                        f"[yellow]waiting for approval:[/yellow] run saved as thread {thread_id}"
                        f"; answer with: {again} --approve (or --reject MESSAGE, --edit JSON)"
                    )
                    raise typer.Exit(EXIT_WAITING)
                result = agent.resume(thread_id, answer, context=limits or None, observer=printer)
            trace = agent.trace(thread_id) if as_json else []
    if not as_json:
        err.print(f"[dim]saved as thread {thread_id} (tether runs show {thread_id})")
    finish(result.state, as_json, trace)


def drive(
    agent: Agent,
    task: str | None,
    thread_id: str,
    context: dict[str, Any] | None,
    as_json: bool,
) -> tuple[RunResult, TracePrinter | None]:
    """Start the run, or pick a saved one up: print it, and continue it unless it waits."""
    if task is not None:
        printer = None if as_json else TracePrinter()
        return agent.run(task, thread_id=thread_id, context=context, observer=printer), printer
    current = agent.status(thread_id)
    spent = int((current.state.get("usage") or {}).get("total_tokens", 0))
    printer = None if as_json else TracePrinter(tokens=spent)  # the count continues
    if current.pending is None and current.status == "running":
        return agent.resume(thread_id, context=context, observer=printer), printer
    return current, printer


def resume_command(
    thread_id: str,
    *,
    tools: str,
    data_dir: Path | None,
    store: str | None,
    world_db: str | None = None,
) -> str:
    """The command that picks this run up again, with the options that locate it."""
    words = ["tether", "run", "--thread", thread_id]
    if tools != "tether.world":
        words += ["--tools", tools]
    if data_dir is not None:
        words += ["--data-dir", str(data_dir)]
    if store is not None:
        words += ["--store", store]
    if world_db is not None:
        words += ["--world-db", world_db]
    return shlex.join(words)


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
