"""Where runs are saved: a LangGraph checkpointer plus the cancel flags, from one location.

SQLite (a file under the data directory; the ``cli`` extra) is the embedded default; a
``postgres://`` or ``postgresql://`` URL selects PostgreSQL (the ``postgres`` extra).
A server that cannot be reached is a one-line :class:`~tether.dburl.DatabaseUnreachableError`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from tether.dburl import is_postgres, libpq_url, sqlalchemy_url, unreachable
from tether.extras import require

if TYPE_CHECKING:
    from tether.control.sql_cancel import SqlCancelStore

RUNS_FILE = "runs.sqlite"


def default_data_dir() -> Path:
    """``$TETHER_DATA_DIR``, else ``./data``."""
    return Path(os.environ.get("TETHER_DATA_DIR") or "data")


@dataclass
class RunStore:
    """Saved runs: every step's checkpoint, and the flags that cancel runs."""

    location: str
    checkpointer: BaseCheckpointSaver[Any]
    cancels: SqlCancelStore
    _closers: list[Callable[[], None]] = field(default_factory=list)

    def close(self) -> None:
        self.cancels.close()
        for closer in self._closers:
            closer()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_run_store(location: str | Path | None = None) -> RunStore:
    """Open (creating if needed) the run store at a path or a PostgreSQL URL."""
    text = str(location) if location is not None else str(default_data_dir() / RUNS_FILE)
    if is_postgres(text):
        return _postgres(text)
    return _sqlite(Path(text.removeprefix("sqlite:///")))


def _sqlite(path: Path) -> RunStore:
    require("cli", "the SQLite run store", "langgraph.checkpoint.sqlite", "sqlalchemy")
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    from tether.control.sql_cancel import SqlCancelStore

    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    return RunStore(str(path), saver, SqlCancelStore(f"sqlite:///{path}"), [conn.close])


def _postgres(url: str) -> RunStore:
    modules = ("langgraph.checkpoint.postgres", "psycopg", "sqlalchemy")
    require("postgres", "a PostgreSQL run store", *modules)
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row

    from tether.control.sql_cancel import SqlCancelStore

    try:
        conn = psycopg.Connection.connect(
            libpq_url(url), autocommit=True, prepare_threshold=0, row_factory=dict_row
        )
    except psycopg.OperationalError as exc:
        raise unreachable(url, exc) from None
    try:
        saver = PostgresSaver(conn)
        saver.setup()
        cancels = SqlCancelStore(sqlalchemy_url(url))
    except BaseException:
        conn.close()
        raise
    return RunStore(url, saver, cancels, [conn.close])
