"""``tether runs``: list saved runs, show one, cancel one from another terminal."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from tether_cli.locations import check_store
from tether_cli.visible import visible, visible_json

if TYPE_CHECKING:
    from tether import Agent
    from tether.control import RunStore

runs_app = typer.Typer(no_args_is_help=True)
out = Console(highlight=False)
StoreOption = Annotated[
    str | None,
    typer.Option(envvar="TETHER_STORE", help="Run store: SQLite path or postgres:// URL."),
]


def _agent(store: str | None) -> tuple[RunStore, Agent]:
    """The store first: an unreachable database is reported before the agent's stack loads."""
    from tether.control import open_run_store

    run_store = open_run_store(None if store is None else check_store(store))
    try:
        from tether import Agent, load_settings

        return run_store, Agent(load_settings(approval_tools=[]), store=run_store)
    except BaseException:
        run_store.close()
        raise


@runs_app.command("list")
def list_runs(
    store: StoreOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the runs as JSON.")] = False,
) -> None:
    """Saved runs, newest first, with their full thread ids."""
    run_store, agent = _agent(store)
    with run_store:
        runs = agent.runs()
    if as_json:
        rows: list[dict[str, Any]] = [asdict(run) for run in runs]
        text = json.dumps(rows, ensure_ascii=False, indent=2, default=str)
        sys.stdout.write(visible_json(text) + "\n")
        return
    width = max((len(run.thread_id) for run in runs), default=6)
    table = Table()
    table.add_column("thread", no_wrap=True, min_width=width)  # ids are never cut
    for name in ("status", "steps", "tokens", "updated", "task"):
        table.add_column(name)
    for run in runs:
        status = run.status if run.waiting_for is None else f"waiting ({run.waiting_for})"
        table.add_row(
            visible(run.thread_id),
            visible(status),
            str(run.steps),
            str(run.total_tokens),
            run.updated_at[:19],
            visible(run.task[:60]),
        )
    out.print(table)


@runs_app.command()
def show(thread: str, store: StoreOption = None) -> None:
    """One run: outcome, usage, and each step's proposal, result and decision (JSON)."""
    run_store, agent = _agent(store)
    with run_store:
        detail = agent.show(thread)
    text = json.dumps(detail, ensure_ascii=False, default=str)
    out.print_json(text, ensure_ascii=visible_json(text) != text)  # escaped: nothing raw


@runs_app.command()
def cancel(
    thread: str,
    reason: Annotated[str, typer.Option(help="Why; the run's reason will say it.")] = "stopped "
    "by the operator",
    store: StoreOption = None,
) -> None:
    """Stop a run before its next model call (it may be running in another process)."""
    run_store, agent = _agent(store)
    with run_store:
        agent.cancel(thread, reason)
    out.print(f"cancel requested for {thread}")
