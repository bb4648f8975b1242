"""A canonical picture of the world's state, and its hash, for judging runs.

Two worlds that went through the same changes hash the same, whatever order rows were written
in and whatever ids, idempotency keys or clock times the run produced: volatile columns (see
:mod:`tether_world.db`) are left out, values are serialised canonically and rows are sorted.
This is how tau-bench judges a run: replay the expected actions on a fresh world and compare
hashes.
"""

from __future__ import annotations

import hashlib
import json
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from tether_world import db


def snapshot(engine: Engine) -> dict[str, list[dict[str, Any]]]:
    """Every world table's non-volatile rows, JSON-safe and in canonical order."""
    return {
        name: [dict(zip(columns, row, strict=True)) for row in rows]
        for name, (columns, rows) in _tables(engine).items()
    }


def snapshot_hash(engine: Engine) -> str:
    """sha256 (hex) of the canonical JSON of every table's columns and sorted rows."""
    text = json.dumps(_tables(engine), ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _tables(engine: Engine) -> dict[str, tuple[list[str], list[list[Any]]]]:
    state: dict[str, tuple[list[str], list[list[Any]]]] = {}
    with engine.connect() as conn:
        for table in db.WORLD_TABLES:
            columns = sorted(c.name for c in table.columns if not c.info.get("volatile"))
            result = conn.execute(sa.select(*(table.c[name] for name in columns)))
            rows = [[_plain(value) for value in row] for row in result]
            rows.sort(key=_sort_key)
            state[table.name] = (columns, rows)
    return state


def _sort_key(row: list[Any]) -> tuple[tuple[bool, str], ...]:
    """A total order on rows that tells None from every value."""
    return tuple((value is None, str(value)) for value in row)


def _plain(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    return value
