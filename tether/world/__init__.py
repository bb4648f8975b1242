"""A demo and benchmark domain for tether: an orders database, a payment API, calculators.

The core loop never imports this package. Typical use::

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
    from tether.world.faults import Fault, FaultInjector, TargetFaults, at_rate, fail_first
    from tether.world.payment_tools import idempotency_key
    from tether.world.world import World, default_data_dir

_EXPORTS = {
    "Fault": "tether.world.faults",
    "FaultInjector": "tether.world.faults",
    "TargetFaults": "tether.world.faults",
    "World": "tether.world.world",
    "at_rate": "tether.world.faults",
    "default_data_dir": "tether.world.world",
    "fail_first": "tether.world.faults",
    "idempotency_key": "tether.world.payment_tools",
}
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


def create_world(data_dir: str | Path | None = None) -> World:
    """The toolset entry point (see tether.toolsets): the world in ``data_dir``."""
    from tether.world.world import World

    return World.create(data_dir)


def __getattr__(name: str) -> Any:
    """Import on first use, so the ``tether world`` commands cost the CLI no start-up time."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tether.world' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
