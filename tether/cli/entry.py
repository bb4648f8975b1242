"""The ``tether`` script: one line and exit 2, not a traceback, for tether's own errors.

A missing extra (the CLI's own, or the world's, the embedded model's, PostgreSQL's) and an
unreachable database surface here when a command does not report them itself.
"""

from __future__ import annotations

import sys

from tether.errors import TetherError
from tether.extras import require

EXIT_ERROR = 2


def main() -> None:
    """Check the ``cli`` extra, then run the Typer app."""
    try:
        require("cli", "the tether command", "typer", "rich")
        from tether.cli.app import app

        app()
    except TetherError as exc:
        if "--debug" in sys.argv[1:]:
            raise  # the traceback was asked for
        sys.stderr.write(f"error: {exc}\n")
        sys.exit(EXIT_ERROR)
