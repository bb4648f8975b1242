"""A demo and benchmark domain for tether: an orders database, a payment API, calculators.

The core loop never imports this package, and importing it loads nothing heavy: its names
are resolved on first use. It provides the ``demo`` toolset (``tether run --tools demo``).
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

if TYPE_CHECKING:
    from tether_world.faults import Fault, FaultInjector, TargetFaults, at_rate, fail_first
    from tether_world.payment_tools import idempotency_key
    from tether_world.world import World, default_data_dir

_EXPORTS = {
    "Fault": "tether_world.faults",
    "FaultInjector": "tether_world.faults",
    "TargetFaults": "tether_world.faults",
    "at_rate": "tether_world.faults",
    "fail_first": "tether_world.faults",
    "idempotency_key": "tether_world.payment_tools",
    "World": "tether_world.world",
    "default_data_dir": "tether_world.world",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tether_world' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def create_world(data_dir: str | Path | None = None, url: str | None = None) -> World:
    """The ``demo`` toolset (an entry point): the world at ``url`` or in ``data_dir``."""
    from tether_world.world import World

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
