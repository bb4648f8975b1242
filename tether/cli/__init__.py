"""The ``tether`` command."""

from tether.cli.app import app

__all__ = ["app"]
