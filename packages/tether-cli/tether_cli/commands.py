"""Commands other packages add to ``tether``, found through ``tether.commands`` entry points.

An entry point names a Typer app (mounted as a command group: ``tether world ...``) or a
command function (``tether bench``). One that cannot be loaded is skipped with a one-line
warning, so a broken plugin never takes the other commands down with it.
"""

from __future__ import annotations

from importlib.metadata import entry_points

import typer
from rich.console import Console
from rich.markup import escape

ENTRY_POINT_GROUP = "tether.commands"


def add_installed_commands(app: typer.Typer, err: Console) -> None:
    """Mount every installed command on ``app``; the built-in ones keep their names."""
    taken = {command.name for command in app.registered_commands}
    taken |= {group.name for group in app.registered_groups}
    for entry in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name):
        if entry.name in taken:
            continue
        try:
            target = entry.load()
        except Exception as exc:  # a plugin's own bug must not break tether --help
            err.print(
                f"[yellow]warning:[/yellow] skipped command {entry.name!r}: {escape(str(exc))}"
            )
            continue
        if isinstance(target, typer.Typer):
            app.add_typer(target, name=entry.name)
        else:
            app.command(entry.name)(target)
        taken.add(entry.name)
