"""tether's optional parts and the extra that installs each.

``pip install tether`` brings only the loop. The embedded model, the demo world, the command
line, PostgreSQL and the benchmark are extras; using one without it installed raises
:class:`MissingExtraError`, whose one-line message is the command that fixes it.
"""

from __future__ import annotations

import importlib.util

from tether.errors import TetherError

__all__ = ["MissingExtraError", "missing_modules", "require"]


class MissingExtraError(TetherError, ImportError):
    """An optional part was used without its extra installed."""


def missing_modules(*modules: str) -> list[str]:
    """The top-level modules among ``modules`` that cannot be imported (without importing)."""
    missing = []
    for name in modules:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(name)
    return missing


def require(extra: str, purpose: str, *modules: str) -> None:
    """Raise MissingExtraError naming ``extra`` when any of ``modules`` is not installed."""
    missing = missing_modules(*modules)
    if missing:
        raise MissingExtraError(
            f"{purpose} needs the '{extra}' extra ({', '.join(missing)} not installed): "
            f"pip install 'tether[{extra}]'"
        )
