"""Where runs are saved: a LangGraph checkpointer, each run's trace and the cancel flags, from
one location.

SQLite (a file under the data directory; the ``sqlite`` extra) is the embedded default; a
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
    from tether.control.trace_log import SqlTraceLog

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
    _closers: list[Callable[[], None]] = field(default_factory=list)

    @classmethod
    def create(
        cls,
        location: str,
        checkpointer: BaseCheckpointSaver[Any],
        sa_url: str,
        closers: list[Callable[[], None]],
    ) -> RunStore:
        """The store, with the cancel flags and the trace log in the checkpoints' database."""
        import sqlalchemy as sa

        from tether.control.sql_cancel import SqlCancelStore
        from tether.control.trace_log import SqlTraceLog

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
    if is_postgres(text):
        return _postgres(text)
    return _sqlite(Path(text.removeprefix("sqlite:///")))


def _sqlite(path: Path) -> RunStore:
    require("sqlite", "the SQLite run store", "langgraph.checkpoint.sqlite", "sqlalchemy")
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    return RunStore.create(str(path), saver, f"sqlite:///{path}", [conn.close])


def _postgres(url: str) -> RunStore:
    modules = ("langgraph.checkpoint.postgres", "psycopg", "sqlalchemy")
    require("postgres", "a PostgreSQL run store", *modules)
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row

    try:
        conn = psycopg.Connection.connect(
            libpq_url(url), autocommit=True, prepare_threshold=0, row_factory=dict_row
        )
    except psycopg.OperationalError as exc:
        raise unreachable(url, exc) from None
    try:
        saver = PostgresSaver(conn)
        saver.setup()
        return RunStore.create(url, saver, sqlalchemy_url(url), [conn.close])
    except BaseException:
        conn.close()
        raise
