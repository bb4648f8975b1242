"""The ``tether`` script: one line and exit 2, not a traceback, for tether's own errors.

A missing extra (the embedded model's, SQLite's or PostgreSQL's) and an
unreachable database surface here when a command does not report them itself.
"""

from __future__ import annotations

import sys

from tether import TetherError

EXIT_ERROR = 2


def main() -> None:
    """Run the Typer app; tether's own errors become one line and exit 2."""
    try:
        from tether_cli.app import app

        app()
    except TetherError as exc:
        if "--debug" in sys.argv[1:]:
            raise  # the traceback was asked for
        from tether_cli.visible import visible

        sys.stderr.write(f"error: {visible(str(exc))}\n")
        sys.exit(EXIT_ERROR)
