"""Fixtures: a fresh world per test, copied from one seeded template to keep tests fast."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.runnables import RunnableConfig
from tether.tools import ToolRegistry
from tether.tools.runinfo import run_config
from tether_world import World
from tether_world.world import DB_FILE


@pytest.fixture(scope="session")
def template_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A seeded world database, closed, ready to be copied."""
    directory = tmp_path_factory.mktemp("world-template")
    World.create(directory).close()
    return directory


@pytest.fixture
def world(template_dir: Path, tmp_path: Path) -> Iterator[World]:
    """A seeded world of its own in ``tmp_path``."""
    for file in template_dir.glob(f"{DB_FILE}*"):
        shutil.copy(file, tmp_path / file.name)
    with World.create(tmp_path) as opened:
        yield opened


@pytest.fixture
def registry(world: World) -> ToolRegistry:
    """All world tools; payments go through the in-process API with the default timeout (a
    test of a timeout sets its own: a short one here fired on a loaded machine)."""
    return world.registry()


@pytest.fixture
def run() -> RunnableConfig:
    """The config of one tether run, as the loop passes it to every tool call."""
    return run_config("run-test-1")
