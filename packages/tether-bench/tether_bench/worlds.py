"""Fresh worlds for every run, cheaply: seed one template, copy its data directory per run.

A toolset keeps its state in the data directory ``create_world(data_dir)`` is given (that is
the toolset contract, see :mod:`tether_cli.toolsets`), so a copy of a freshly created directory is
a fresh world. Seeding the orders world takes far longer than copying its file, and a
benchmark creates a world per run plus one per gold replay.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tether import TetherError, ToolRegistry

from tether_bench.scenarios import FaultRule, Scenario, ToolAction
from tether_bench.toolset import BenchWorld, open_world


class ScenarioSetupError(TetherError):
    """A scenario's initial state or gold plan does not work on a fresh world."""


class WorldFactory:
    """Makes fresh worlds of one toolset module; :meth:`close` deletes every copy."""

    def __init__(self, toolset: str = "demo", root: Path | None = None) -> None:
        self.toolset = toolset
        self._owns_root = root is None
        self.root = Path(tempfile.mkdtemp(prefix="tether-bench-")) if root is None else root
        self.root.mkdir(parents=True, exist_ok=True)
        self._template: Path | None = None
        self._lock = threading.Lock()

    def _template_dir(self) -> Path:
        with self._lock:
            if self._template is None:
                template = self.root / "template"
                world = open_world(self.toolset, template)
                world.close()
                self._template = template
            return self._template

    @contextmanager
    def fresh(self) -> Iterator[BenchWorld]:
        """A world in its seeded state, closed and deleted when the block ends."""
        template = self._template_dir()
        directory = self.root / f"run-{uuid.uuid4().hex}"
        shutil.copytree(template, directory)
        world = open_world(self.toolset, directory)
        try:
            yield world
        finally:
            world.close()
            shutil.rmtree(directory, ignore_errors=True)

    def close(self) -> None:
        if self._owns_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> WorldFactory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def replay(registry: ToolRegistry, actions: list[ToolAction], what: str) -> list[dict[str, Any]]:
    """Run ``actions`` in order; every one must succeed (ScenarioSetupError otherwise)."""
    results = []
    for index, action in enumerate(actions):
        result = registry.invoke(action.tool, action.arguments)
        if result["status"] != "success":
            raise ScenarioSetupError(
                f"{what} action {index} ({action.tool}) failed: {result.get('message')}"
            )
        results.append(dict(result))
    return results


def prepare(world: BenchWorld, scenario: Scenario) -> None:
    """Apply the scenario's initial-state patch, then arm its fault plan."""
    if scenario.initial_state is not None:
        replay(world.registry(), scenario.initial_state.actions, f"{scenario.id}: initial-state")
    if scenario.fault_plan:
        set_faults = getattr(world, "set_faults", None)
        if not callable(set_faults):
            raise ScenarioSetupError(
                f"{scenario.id} has a fault plan, but the toolset's world has no "
                "set_faults(plan) method"
            )
        set_faults(fault_plan(scenario.fault_plan))


def fault_plan(rules: list[FaultRule]) -> dict[str, dict[str, Any]]:
    """The scenario's rules in the world's plan format: target -> {schedule: {index: fault}}."""
    plan: dict[str, dict[str, Any]] = {}
    for rule in rules:
        schedule = plan.setdefault(rule.target, {"schedule": {}})["schedule"]
        for index in rule.calls:
            schedule[index] = {
                "status": rule.status,
                "delay_s": rule.delay_s,
                "after_effect": rule.after_effect,
            }
    return plan


class ExpectedStates:
    """The gold state hash per scenario: the gold plan replayed on a fresh world, no faults."""

    def __init__(self, worlds: WorldFactory) -> None:
        self._worlds = worlds
        self._hashes: dict[str, str] = {}
        self._lock = threading.Lock()

    def hash_for(self, scenario: Scenario) -> str:
        with self._lock:
            cached = self._hashes.get(scenario.id)
        if cached is not None:
            return cached
        with self._worlds.fresh() as world:
            if scenario.initial_state is not None:
                replay(world.registry(), scenario.initial_state.actions, f"{scenario.id}: setup")
            replay(world.registry(), scenario.gold_actions, f"{scenario.id}: gold")
            value = world.snapshot_hash()
        with self._lock:
            self._hashes[scenario.id] = value
        return value
