"""The World facade: creation, registry, snapshot hash, reset, temporary worlds."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import sqlalchemy as sa
from pydantic import BaseModel
from tether.tools import ToolRegistry
from tether_world import World, default_data_dir
from tether_world import db as world_db

WORLD_TOOLS = {
    "query_order",
    "find_user",
    "list_user_orders",
    "get_product",
    "cancel_order",
    "update_shipping_address",
    "pay_order",
    "refund_payment",
    "compute_discount",
    "compute_shipping",
    "convert_currency",
    "calculate",
}
CJK = re.compile(r"[\u4e00-\u9fff]")


def test_registry_holds_every_tool_with_a_bilingual_schema(registry: ToolRegistry) -> None:
    assert set(registry.names()) == WORLD_TOOLS
    for tool in registry.tools():
        schema = tool.args_schema
        assert isinstance(schema, type) and issubclass(schema, BaseModel)
        assert tool.description, tool.name
        for name, field in schema.model_fields.items():
            text = field.description or ""
            assert CJK.search(text) and re.search(r"[A-Za-z]{3}", text), (tool.name, name)


def test_unknown_fields_are_refused_not_dropped(registry: ToolRegistry) -> None:
    result = registry.invoke("query_order", {"order_id": "ORD-2024-001", "verbose": True})
    assert result["status"] == "error"
    assert "unexpected field 'verbose'" in result["message"]


def test_world_state_survives_reopening(template_dir: Path, tmp_path: Path) -> None:
    with World.create(tmp_path) as first:
        first.registry().invoke("cancel_order", {"order_id": "ORD-2024-001"})
        changed = first.snapshot_hash()
    with World.create(tmp_path) as again:
        assert again.snapshot_hash() == changed


def test_reset_returns_to_the_seeded_state(world: World, registry: ToolRegistry) -> None:
    seeded, ledger = world.snapshot_hash(), len(world.payments())
    assert registry.invoke("cancel_order", {"order_id": "ORD-2024-001"})["status"] == "success"
    assert world.snapshot_hash() != seeded
    world.reset()
    assert world.snapshot_hash() == seeded
    assert len(world.payments()) == ledger


def test_same_seed_same_hash_other_seed_other_hash(world: World) -> None:
    with World.temporary() as twin:
        assert twin.snapshot_hash() == world.snapshot_hash()
    with World.temporary(seed=7) as other:
        assert other.snapshot_hash() != world.snapshot_hash()


def test_hash_ignores_row_order_ids_and_times(world: World) -> None:
    before = world.snapshot_hash()
    with world.engine.begin() as conn:
        rows = [dict(r) for r in conn.execute(sa.select(world_db.order_items)).mappings()]
        conn.execute(world_db.order_items.delete())
        conn.execute(world_db.order_items.insert(), rows[::-1])  # reversed insertion order
        conn.execute(
            world_db.payments.update().values(
                created_at=sa.func.datetime("now"),
                idempotency_key=sa.func.upper(world_db.payments.c.idempotency_key),
            )
        )
    assert world.snapshot_hash() == before


def test_hash_sees_every_real_change(world: World) -> None:
    before = world.snapshot_hash()
    with world.engine.begin() as conn:
        conn.execute(
            world_db.variants.update()
            .where(world_db.variants.c.sku == "P001-02")
            .values(stock=world_db.variants.c.stock + 1)
        )
    assert world.snapshot_hash() != before


def test_snapshot_lists_tables_and_ledger(world: World) -> None:
    state = world.snapshot()
    assert set(state) == {"users", "products", "variants", "orders", "order_items", "payments"}
    assert len(state["orders"]) == 1000
    assert "idempotency_key" not in state["payments"][0]
    assert len(world.payments()) == len(state["payments"])


def test_temporary_world_is_deleted_on_close() -> None:
    world = World.temporary()
    directory = world.data_dir
    assert directory is not None and (directory / "world.sqlite").exists()
    world.close()
    assert not directory.exists()


def test_seed_mismatch_is_an_error_not_a_silent_mix(world: World) -> None:
    seeded = world.snapshot_hash()
    with pytest.raises(ValueError, match="seeded with seed 2024, not 7"):
        World.create(world.data_dir, seed=7)
    assert world.snapshot_hash() == seeded
    with World.create(world.data_dir, seed=7, fresh=True) as reseeded:
        assert reseeded.snapshot_hash() != seeded


def test_default_data_dir_follows_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert default_data_dir() == Path("data")
    monkeypatch.setenv("TETHER_DATA_DIR", str(tmp_path / "here"))
    assert default_data_dir() == tmp_path / "here"


def test_any_sqlalchemy_url_works_but_not_in_memory(tmp_path: Path) -> None:
    with World.create(url=f"sqlite:///{tmp_path / 'elsewhere.db'}") as world:
        assert world.data_dir is None
        assert world.registry().invoke("query_order", {"order_id": "ORD-2024-001"})["status"] == (
            "success"
        )
    with pytest.raises(ValueError, match="in-memory"):
        World.create(url="sqlite://")


def test_unknown_fault_targets_are_refused(world: World) -> None:
    with pytest.raises(ValueError, match="unknown fault targets"):
        world.set_faults({"api.create_paymnet": {"schedule": {0: {"status": 503}}}})
