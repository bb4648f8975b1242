"""The tether command: run an agent on a task, resume and inspect saved runs, the demo world.

Commands import what they need when they run, so ``tether --help`` answers at once.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated, Any

import typer
from rich.console import Console

from tether.bench.cli import bench
from tether.cli.environment import check_settings, unknown_variable_warnings
from tether.cli.group import TetherGroup
from tether.cli.output import finish
from tether.cli.run import run
from tether.cli.runs import runs_app
from tether.world.cli import world_app

app = typer.Typer(
    cls=TetherGroup,
    help="Run tool-calling agents under control.",
    no_args_is_help=True,
    rich_markup_mode=None,  # plain help: rich's markdown renderer alone costs ~0.3 s a start
    pretty_exceptions_enable=False,  # tracebacks only with --debug (see TetherGroup)
)
app.add_typer(runs_app, name="runs", help="Saved runs: list, show, cancel.")
app.add_typer(world_app, name="world", help="The demo world: orders, payments, calculators.")
app.command("bench")(bench)
app.command("run")(run)
err = Console(stderr=True, highlight=False, soft_wrap=True)


@app.callback()
def main(
    debug: Annotated[
        bool, typer.Option("--debug", help="Show the traceback when a command fails.")
    ] = False,
) -> None:
    """Check the TETHER_* environment before any command: bad values stop it (exit 2)."""
    for warning in unknown_variable_warnings(os.environ):
        err.print(f"[yellow]warning:[/yellow] {warning}")
    check_settings(os.environ)


@app.command()
def demo(
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """The design note's flow with a SCRIPTED model (no model server): query, discount, pay."""
    from tether.console import TracePrinter
    from tether.loop.builder import build_graph
    from tether.settings import load_settings
    from tether.testing import ScriptedChatModel
    from tether.world import World
    from tether.world.demo import SEED_FLOW_REPLIES, SEED_TASK

    err.print("[yellow]scripted demo:[/yellow] replies come from a script, not a model")
    with World.temporary() as world:
        model = ScriptedChatModel(responses=list(SEED_FLOW_REPLIES))
        # No run store here, so nothing can pause: the scripted payment runs unapproved.
        settings = load_settings(approval_tools=[])
        graph = build_graph(settings, model=model, registry=world.registry())
        printer = None if as_json else TracePrinter()
        final: dict[str, Any] = {}
        trace: list[Any] = []
        chunks: Any = graph.stream({"task": SEED_TASK}, stream_mode=["custom", "values"])
        for mode, chunk in chunks:
            if mode == "values":
                final = chunk
            else:
                trace.append(chunk)
                if printer:
                    printer.event(chunk)
    finish(final, as_json, trace)


@app.command()
def graph() -> None:
    """Print the loop's graph as a Mermaid diagram."""
    from tether.loop.diagram import mermaid

    sys.stdout.write(mermaid() + "\n")
