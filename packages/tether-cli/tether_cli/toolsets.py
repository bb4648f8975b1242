"""Toolsets: the tools an agent is given and whatever they act on, found by name.

A package makes a toolset available by declaring an entry point in the ``tether.toolsets``
group whose object is a factory ``create(data_dir: Path | None, *, url: str | None) -> Toolset``
(``url`` only when the toolset keeps a database). ``tether-world`` declares ``demo``. A
dotted module path that exposes ``create_world`` works too, for toolsets not installed as a
package.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from tether import TetherError, ToolRegistry
from tether.extras import MissingExtraError

ENTRY_POINT_GROUP = "tether.toolsets"

__all__ = ["ENTRY_POINT_GROUP", "Toolset", "load_toolset", "toolset_names"]


@runtime_checkable
class Toolset(Protocol):
    """What a toolset gives an agent: its tools, and a way to release what backs them."""

    def registry(self) -> ToolRegistry: ...
    def close(self) -> None: ...


def toolset_names() -> list[str]:
    """The names of the installed toolsets (their ``tether.toolsets`` entry points)."""
    return sorted({ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)})


def _factory(name: str) -> Callable[..., Any]:
    """The named entry point's factory, else ``create_world`` of the module of that path."""
    found = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == name]
    try:
        if found:
            return found[0].load()  # type: ignore[no-any-return]
        if not all(part.isidentifier() for part in name.split(".")):
            raise _unknown(name, "nor a module path")  # ".x" would be a relative import
        module = importlib.import_module(name)
    except MissingExtraError:
        raise
    except ModuleNotFoundError as exc:
        if exc.name is None or not name.startswith(exc.name):
            raise TetherError(f"cannot import toolset {name!r}: {exc}") from exc
        raise _unknown(name, "nor an importable module") from None
    except ImportError as exc:
        raise TetherError(f"cannot import toolset {name!r}: {exc}") from exc
    factory = getattr(module, "create_world", None)
    if not callable(factory):
        raise _unknown(name, "nor a module with a create_world(data_dir) function")
    return factory  # type: ignore[no-any-return]


def _unknown(name: str, what_else: str) -> TetherError:
    known = ", ".join(toolset_names()) or "none installed"
    return TetherError(f"{name!r} is neither an installed toolset ({known}) {what_else}")


def load_toolset(name: str, data_dir: Path | None = None, database: str | None = None) -> Toolset:
    """Create the toolset ``name`` (an entry point name or a module path), with clear errors."""
    if not name.strip():
        raise TetherError("a toolset name cannot be empty")
    factory = _factory(name)
    if database is None:
        return factory(data_dir)  # type: ignore[no-any-return]
    if "url" not in inspect.signature(factory).parameters:
        raise TetherError(f"toolset {name!r} does not take a database URL")
    return factory(data_dir, url=database)  # type: ignore[no-any-return]
