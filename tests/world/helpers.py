"""Assertions and look-ups shared by the world tests."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from tether_world import World
from tether_world import db as world_db


def ok(result: Any) -> Any:
    """The data of a success envelope (fails the test with the message otherwise)."""
    assert result["status"] == "success", result.get("message")
    return result["data"]


def failed(result: Any, *fragments: str, error_type: str = "tool_error") -> str:
    """Assert an error envelope of ``error_type`` whose message holds every fragment."""
    assert result["status"] == "error", result
    assert result["meta"]["error_type"] == error_type, result
    for fragment in fragments:
        assert fragment in result["message"], result["message"]
    return str(result["message"])


def order_with(world: World, status: str, *where: sa.ColumnElement[bool]) -> str:
    """The id of the earliest seeded order with ``status`` (and ``where``)."""
    query = (
        sa.select(world_db.orders.c.id)
        .where(world_db.orders.c.status == status, *where)
        .order_by(world_db.orders.c.created_at)
        .limit(1)
    )
    with world.engine.connect() as conn:
        found = conn.scalar(query)
    assert found is not None, f"no {status} order in the seed"
    return str(found)


def payments_of(world: World, order_id: str = "ORD-2024-001") -> list[dict[str, Any]]:
    """The ledger's payments for one order."""
    return [p for p in world.payments() if p["order_id"] == order_id]
