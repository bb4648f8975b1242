"""A demo and benchmark domain for tether: an orders database, a payment API, calculators.

The core loop never imports this package. Typical use::

    with World.temporary() as world:
        registry = world.registry()
        registry.invoke("query_order", {"order_id": "ORD-2024-001"})
        world.snapshot_hash()
"""

from tether.world.faults import Fault, FaultInjector, TargetFaults, at_rate, fail_first
from tether.world.payment_tools import idempotency_key
from tether.world.world import World, default_data_dir

__all__ = [
    "Fault",
    "FaultInjector",
    "TargetFaults",
    "World",
    "at_rate",
    "default_data_dir",
    "fail_first",
    "idempotency_key",
]
