"""A demo and benchmark domain for tether: an orders database, a payment API, calculators.

The core loop never imports this package, and importing it loads nothing heavy: its names
are resolved on first use, which is where a missing ``world`` extra is reported in one line.
Typical use::

    with World.temporary() as world:
        registry = world.registry()
        registry.invoke("query_order", {"order_id": "ORD-2024-001"})
        world.snapshot_hash()
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.extras import require

if TYPE_CHECKING:
    from tether.world.faults import Fault, FaultInjector, TargetFaults, at_rate, fail_first
    from tether.world.payment_tools import idempotency_key
    from tether.world.world import World, default_data_dir

_EXPORTS = {
    "Fault": "tether.world.faults",
    "FaultInjector": "tether.world.faults",
    "TargetFaults": "tether.world.faults",
    "at_rate": "tether.world.faults",
    "fail_first": "tether.world.faults",
    "idempotency_key": "tether.world.payment_tools",
    "World": "tether.world.world",
    "default_data_dir": "tether.world.world",
}


def require_world() -> None:
    """Raise a one-line MissingExtraError when the ``world`` extra is not installed."""
    require("world", "the demo world", "sqlalchemy", "starlette", "uvicorn")


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tether.world' has no attribute {name!r}")
    require_world()
    return getattr(importlib.import_module(module), name)


def create_world(data_dir: str | Path | None = None, url: str | None = None) -> World:
    """The toolset entry point (see tether.toolsets): the world at ``url`` or in ``data_dir``."""
    require_world()
    from tether.world.world import World

    return World.create(data_dir, url=url)


__all__ = [
    "Fault",
    "FaultInjector",
    "TargetFaults",
    "World",
    "at_rate",
    "create_world",
    "default_data_dir",
    "fail_first",
    "idempotency_key",
]
