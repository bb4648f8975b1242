"""The ``tether`` command (the ``cli`` extra); its entry point is :func:`tether_cli.entry.main`.

``app`` is resolved on first use so that the entry point can first check the extra.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "app":
        from tether_cli.app import app

        return app
    raise AttributeError(f"module 'tether_cli' has no attribute {name!r}")


__all__ = ["app"]
