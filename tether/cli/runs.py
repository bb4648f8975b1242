"""``tether runs``: list saved runs, show one, cancel one from another terminal."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from tether.errors import TetherError

runs_app = typer.Typer(no_args_is_help=True)
out = Console(highlight=False)
StoreOption = Annotated[
    str | None,
    typer.Option(envvar="TETHER_STORE", help="Run store: SQLite path or postgres:// URL."),
]


def _agent(store: str | None):  # type: ignore[no-untyped-def]
    from tether.agent import Agent
    from tether.control.store import open_run_store
    from tether.settings import AgentSettings

    run_store = open_run_store(store)
    return run_store, Agent(AgentSettings(approval_tools=[]), store=run_store)


@runs_app.command("list")
def list_runs(store: StoreOption = None) -> None:
    """Saved runs, newest first."""
    run_store, agent = _agent(store)
    with run_store:
        table = Table("thread", "status", "steps", "tokens", "updated", "task")
        for run in agent.runs():
            status = run.status if run.waiting_for is None else f"waiting ({run.waiting_for})"
            table.add_row(
                run.thread_id,
                status,
                str(run.steps),
                str(run.total_tokens),
                run.updated_at[:19],
                run.task[:60],
            )
        out.print(table)


@runs_app.command()
def show(thread: str, store: StoreOption = None) -> None:
    """One run: outcome, usage, and each step's proposal, result and decision (JSON)."""
    run_store, agent = _agent(store)
    with run_store:
        try:
            detail = agent.show(thread)
        except TetherError as exc:
            Console(stderr=True).print(f"[red]error:[/red] {exc}")
            raise typer.Exit(2) from exc
    out.print_json(json.dumps(detail, ensure_ascii=False, default=str))


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
        try:
            agent.cancel(thread, reason)
        except TetherError as exc:
            Console(stderr=True).print(f"[red]error:[/red] {exc}")
            raise typer.Exit(2) from exc
    out.print(f"cancel requested for {thread}")
