"""Toolsets: importable modules that provide an agent's tools and the world they act on.

A toolset module exposes ``create_world(data_dir: Path | None) -> world`` (and may accept
``url=`` for a database URL, as ``tether.world`` does) where the world
has ``registry() -> ToolRegistry``, ``snapshot_hash() -> str``, ``reset()`` and ``close()``.
``tether.world`` (orders, payments, calculations) is the built-in one.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from typing import Protocol

from tether.errors import TetherError
from tether.extras import MissingExtraError
from tether.tools.registry import ToolRegistry


class World(Protocol):
    def registry(self) -> ToolRegistry: ...
    def snapshot_hash(self) -> str: ...
    def reset(self) -> None: ...
    def close(self) -> None: ...


def load_toolset(
    module_name: str, data_dir: Path | None = None, database: str | None = None
) -> World:
    """Import ``module_name`` and create its world, with a clear error when it can't."""
    try:
        module = importlib.import_module(module_name)
    except MissingExtraError:
        raise
    except ImportError as exc:
        raise TetherError(f"cannot import toolset module {module_name!r}: {exc}") from exc
    factory = getattr(module, "create_world", None)
    if not callable(factory):
        raise TetherError(f"toolset module {module_name!r} has no create_world(data_dir) function")
    if database is None:
        return factory(data_dir)
    if "url" not in inspect.signature(factory).parameters:
        raise TetherError(f"toolset module {module_name!r} does not take a database URL")
    return factory(data_dir, url=database)
