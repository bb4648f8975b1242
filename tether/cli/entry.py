"""The ``tether`` script: one clear line, not a traceback, when an extra is missing."""

from __future__ import annotations

import sys

from tether.extras import MissingExtraError, require

EXIT_ERROR = 2


def main() -> None:
    """Check the ``cli`` extra, then run the Typer app; a missing extra exits 2 with one line."""
    try:
        require("cli", "the tether command", "typer", "rich")
        from tether.cli.app import app

        app()
    except MissingExtraError as exc:
        sys.stderr.write(f"error: {exc}\n")
        sys.exit(EXIT_ERROR)
