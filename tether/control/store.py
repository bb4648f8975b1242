"""Where runs are saved: a LangGraph checkpointer plus the cancel flags, from one location.

SQLite (a file under the data directory) is the embedded default; a ``postgresql://`` URL
selects PostgreSQL (``langgraph-checkpoint-postgres``) for production.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver

from tether.control.cancel import SqlCancelStore
from tether.control.trace_log import SqlTraceLog
from tether.errors import TetherError

RUNS_FILE = "runs.sqlite"


def default_data_dir() -> Path:
    """``$TETHER_DATA_DIR``, else ``./data``."""
    return Path(os.environ.get("TETHER_DATA_DIR") or "data")


@dataclass
class RunStore:
    """Saved runs: every step's checkpoint, each run's trace, and the flags that cancel runs."""

    location: str
    checkpointer: BaseCheckpointSaver[Any]
    cancels: SqlCancelStore
    trace: SqlTraceLog
    _closers: list[Any] = field(default_factory=list)

    @classmethod
    def create(
        cls, location: str, checkpointer: BaseCheckpointSaver[Any], sa_url: str, closers: list[Any]
    ) -> RunStore:
        engine = sa.create_engine(sa_url)
        return cls(
            location,
            checkpointer,
            SqlCancelStore(engine),
            SqlTraceLog(engine),
            [*closers, engine.dispose],
        )

    def close(self) -> None:
        for closer in self._closers:
            closer()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_run_store(location: str | Path | None = None) -> RunStore:
    """Open (creating if needed) the run store at a path or a PostgreSQL URL."""
    text = str(location) if location is not None else str(default_data_dir() / RUNS_FILE)
    if text.startswith(("postgresql://", "postgres://")):
        return _postgres(text)
    path = Path(text.removeprefix("sqlite:///"))
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    return RunStore.create(str(path), saver, f"sqlite:///{path}", [conn.close])


def _postgres(url: str) -> RunStore:
    try:
        from langgraph.checkpoint.postgres import PostgresSaver  # type: ignore[import-not-found]
        from psycopg import Connection  # type: ignore[import-not-found]
        from psycopg.rows import dict_row  # type: ignore[import-not-found]
    except ImportError as exc:
        raise TetherError(
            "a PostgreSQL run store needs: pip install langgraph-checkpoint-postgres psycopg"
        ) from exc
    conn = Connection.connect(url, autocommit=True, prepare_threshold=0, row_factory=dict_row)
    saver = PostgresSaver(conn)
    saver.setup()
    sa_url = url.replace("postgresql://", "postgresql+psycopg://", 1)
    return RunStore.create(url, saver, sa_url, [conn.close])
