"""Fresh worlds for every run, cheaply: seed one template, copy its data directory per run.

A toolset keeps its state in the data directory ``create_world(data_dir)`` is given (that is
the toolset contract, see :mod:`tether_cli.toolsets`), so a copy of a freshly created directory is
a fresh world. Seeding the orders world takes far longer than copying its file, and a
benchmark creates a world per run plus one per gold replay.

While a factory is open the demo world's clock is pinned (:data:`WORLD_CLOCK`): a payment's
``created_at`` or a refund's ``refunded_at`` is shown to the model, counted in its prompt's
tokens, read by the judge as evidence and kept in the record, so a wall-clock time there would
make two identical runs differ.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from tether import TetherError, ToolRegistry

from tether_bench.scenarios import FaultRule, Scenario, ToolAction
from tether_bench.toolset import BenchWorld, open_world


class ScenarioSetupError(TetherError):
    """A scenario's initial state or gold plan does not work on a fresh world."""


WORLD_CLOCK = datetime(2025, 2, 1, 9, 0, 0)
"""What the demo world's clock (``tether_world.queries.utcnow``, naive UTC) reads while a
:class:`WorldFactory` is open: later than every seeded time (the seed's last delivery is in
early January 2025), so rows written in a run still sort after the seeded ones, and the same
in every run."""

_clock_lock = threading.Lock()
_clock_users = 0
_clock_original: Callable[[], datetime] | None = None


def _world_clock() -> datetime:
    return WORLD_CLOCK


def _world_modules() -> list[Any]:
    return [m for n, m in list(sys.modules.items()) if n.split(".")[0] == "tether_world"]


def pin_world_clock() -> None:
    """Pin the demo world's clock to :data:`WORLD_CLOCK` (in every tether_world module that
    imported ``utcnow``) until as many :func:`release_world_clock` calls; a no-op without
    tether_world. The world has no clock parameter, so this is done from here."""
    global _clock_users, _clock_original
    try:
        from tether_world import queries, world  # noqa: F401  # world imports every clock user
    except ImportError:  # pragma: no cover - tether_world is a dependency of the benchmark
        return
    with _clock_lock:
        _clock_users += 1
        if _clock_users > 1:
            return
        _clock_original = queries.utcnow
        for module in _world_modules():
            if getattr(module, "utcnow", None) is _clock_original:
                module.utcnow = _world_clock


def release_world_clock() -> None:
    """Undo one :func:`pin_world_clock`; the last one puts the world's own clock back."""
    global _clock_users, _clock_original
    with _clock_lock:
        if _clock_users == 0:
            return
        _clock_users -= 1
        if _clock_users or _clock_original is None:
            return
        for module in _world_modules():
            if getattr(module, "utcnow", None) is _world_clock:
                module.utcnow = _clock_original
        _clock_original = None


class WorldFactory:
    """Makes fresh worlds of one toolset module; :meth:`close` deletes every copy (and
    releases the pinned world clock, see :func:`pin_world_clock`)."""

    def __init__(self, toolset: str = "demo", root: Path | None = None) -> None:
        pin_world_clock()
        self._pinned = True
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
        if self._pinned:
            self._pinned = False
            release_world_clock()

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
