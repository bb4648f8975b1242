"""What the benchmark needs of a toolset beyond what tether needs: a state it can judge."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

from tether import TetherError
from tether_cli.toolsets import Toolset, load_toolset


@runtime_checkable
class BenchWorld(Toolset, Protocol):
    """A toolset whose state the judge can compare, and that can return to its seeded state."""

    def snapshot_hash(self) -> str: ...
    def reset(self) -> None: ...


def open_world(toolset: str, directory: Path) -> BenchWorld:
    """The toolset ``toolset`` kept in ``directory``; an error when the judge cannot read it."""
    world = load_toolset(toolset, directory)
    if not isinstance(world, BenchWorld):
        world.close()
        raise TetherError(
            f"toolset {toolset!r} cannot be benchmarked: it has no snapshot_hash() and reset()"
        )
    return world
