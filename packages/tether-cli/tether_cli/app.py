"""The tether command: run an agent on a task, resume and inspect saved runs.

Commands import what they need when they run, so ``tether --help`` answers at once.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from tether_cli.commands import add_installed_commands
from tether_cli.environment import check_settings, unknown_variable_warnings
from tether_cli.group import TetherGroup
from tether_cli.run import run
from tether_cli.runs import runs_app
from tether_cli.visible import visible

app = typer.Typer(
    cls=TetherGroup,
    help="Run tool-calling agents under control.",
    no_args_is_help=True,
    rich_markup_mode=None,  # plain help: rich's markdown renderer alone costs ~0.3 s a start
    pretty_exceptions_enable=False,  # tracebacks only with --debug (see TetherGroup)
)
app.add_typer(runs_app, name="runs", help="Saved runs: list, show, cancel.")
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
        err.print(f"[yellow]warning:[/yellow] {escape(visible(warning))}")
    check_settings(os.environ)


@app.command()
def graph() -> None:
    """Print the loop's graph as a Mermaid diagram."""
    from tether import mermaid

    sys.stdout.write(mermaid() + "\n")


@app.command()
def toolsets() -> None:
    """List the installed toolsets (give one to tether run --tools NAME)."""
    from tether_cli.toolsets import toolset_names

    names = toolset_names()
    sys.stdout.write("\n".join(names) + "\n" if names else "no toolset installed\n")


add_installed_commands(app, err)
