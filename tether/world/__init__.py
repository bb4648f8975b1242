"""A demo and benchmark domain for tether: an orders database, a payment API, calculators.

The core loop never imports this package. Typical use::

    with World.temporary() as world:
        registry = world.registry()
        registry.invoke("query_order", {"order_id": "ORD-2024-001"})
        world.snapshot_hash()
"""

from pathlib import Path

from tether.world.faults import Fault, FaultInjector, TargetFaults, at_rate, fail_first
from tether.world.payment_tools import idempotency_key
from tether.world.world import World, default_data_dir


def create_world(data_dir: str | Path | None = None) -> World:
    """The toolset entry point (see tether.toolsets): the world in ``data_dir``."""
    return World.create(data_dir)


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
