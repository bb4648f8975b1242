"""Where runs are saved: a LangGraph checkpointer, each run's trace and the cancel flags, from
one location.

SQLite (a file under the data directory; the ``sqlite`` extra) is the embedded default; a
``postgres://`` or ``postgresql://`` URL selects PostgreSQL (the ``postgres`` extra).
A server that cannot be reached is a one-line :class:`~tether.dburl.DatabaseUnreachableError`.
:func:`open_async_run_store` opens the same tables with LangGraph's async savers (AsyncAgent).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager, nullcontext
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
SETUP_LOCK = 0x7E7E_5E7  # tether's PostgreSQL advisory lock key, held while tables are made
_SQLITE_MODULES = ("langgraph.checkpoint.sqlite", "sqlalchemy")
_POSTGRES_MODULES = ("langgraph.checkpoint.postgres", "psycopg", "sqlalchemy")


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
        cancels, trace, dispose = _sql_logs(sa_url)
        return cls(location, checkpointer, cancels, trace, [*closers, dispose])

    def close(self) -> None:
        for closer in self._closers:
            closer()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class AsyncRunStore:
    """RunStore's tables with an async checkpointer (``AsyncSqliteSaver``/``AsyncPostgresSaver``),
    for AsyncAgent; it belongs to the event loop that opened it. ``cancels`` and ``trace`` are
    RunStore's sync SQLAlchemy stores (one short statement a call): AsyncAgent calls them in a
    thread (``asyncio.to_thread``), the nodes in a thread of their own."""

    location: str
    checkpointer: BaseCheckpointSaver[Any]
    cancels: SqlCancelStore
    trace: SqlTraceLog


def open_run_store(location: str | Path | None = None) -> RunStore:
    """Open (creating if needed) the run store at a path or a PostgreSQL URL."""
    where = _where(location)
    return _sqlite(where) if isinstance(where, Path) else _postgres(where)


@asynccontextmanager
async def open_async_run_store(location: str | Path | None = None) -> AsyncIterator[AsyncRunStore]:
    """:func:`open_run_store` for async runs (AsyncAgent); ``async with`` closes it."""
    where = _where(location)
    async with AsyncExitStack() as stack:
        pg = not isinstance(where, Path)
        with await asyncio.to_thread(setup_lock, str(where)) if pg else nullcontext():
            if isinstance(where, Path):
                saver = await _async_sqlite(where, stack)
                sa_url = f"sqlite:///{where}"
            else:
                saver = await _async_postgres(where, stack)
                sa_url = sqlalchemy_url(where)
            cancels, trace, dispose = await asyncio.to_thread(_sql_logs, sa_url)
        stack.callback(dispose)
        yield AsyncRunStore(str(where), saver, cancels, trace)


def _where(location: str | Path | None) -> str | Path:
    """The SQLite file's path, or the PostgreSQL URL."""
    text = str(location) if location is not None else str(default_data_dir() / RUNS_FILE)
    return text if is_postgres(text) else Path(text.removeprefix("sqlite:///"))


def _sql_logs(sa_url: str) -> tuple[SqlCancelStore, SqlTraceLog, Callable[[], None]]:
    """The cancel flags and the trace log in the database at ``sa_url``, and what closes them."""
    import sqlalchemy as sa

    from tether.control.sql_cancel import SqlCancelStore
    from tether.control.trace_log import SqlTraceLog

    engine = sa.create_engine(sa_url)
    return SqlCancelStore(engine), SqlTraceLog(engine), engine.dispose


@contextmanager
def _reaching(url: str) -> Iterator[None]:
    """A PostgreSQL connection that fails as a one-line DatabaseUnreachableError."""
    import psycopg

    try:
        yield
    except (psycopg.OperationalError, psycopg.ProgrammingError) as exc:  # down, or a bad URL
        raise unreachable(url, exc) from None


def setup_lock(url: str) -> Any:
    """A connection holding :data:`SETUP_LOCK` until it closes (``with setup_lock(URL):
    store.setup()``): LangGraph's ``setup()`` fails on a duplicate key when workers run it at
    once. Polled: a worker blocked on the lock would hold a snapshot that the holder's CREATE
    INDEX CONCURRENTLY waits for, a deadlock PostgreSQL cannot see."""
    import psycopg

    with _reaching(url):
        conn = psycopg.connect(libpq_url(url), autocommit=True)
    while conn.execute("SELECT pg_try_advisory_lock(%s)", (SETUP_LOCK,)).fetchone() != (True,):
        time.sleep(0.05)
    return conn


def _sqlite(path: Path) -> RunStore:
    require("sqlite", "the SQLite run store", *_SQLITE_MODULES)
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    return RunStore.create(str(path), saver, f"sqlite:///{path}", [conn.close])


def _postgres(url: str) -> RunStore:
    require("postgres", "a PostgreSQL run store", *_POSTGRES_MODULES)
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row

    with _reaching(url):
        conn = psycopg.Connection.connect(
            libpq_url(url), autocommit=True, prepare_threshold=0, row_factory=dict_row
        )
    try:
        saver = PostgresSaver(conn)
        with setup_lock(url):  # tables made once, whichever worker comes first
            saver.setup()
            return RunStore.create(url, saver, sqlalchemy_url(url), [conn.close])
    except BaseException:
        conn.close()
        raise


async def _async_sqlite(path: Path, stack: AsyncExitStack) -> BaseCheckpointSaver[Any]:
    require("sqlite", "the SQLite run store", *_SQLITE_MODULES, "aiosqlite")
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    path.parent.mkdir(parents=True, exist_ok=True)
    conn = await stack.enter_async_context(aiosqlite.connect(str(path)))
    saver = AsyncSqliteSaver(conn)
    await saver.setup()
    return saver


async def _async_postgres(url: str, stack: AsyncExitStack) -> BaseCheckpointSaver[Any]:
    require("postgres", "a PostgreSQL run store", *_POSTGRES_MODULES)
    import psycopg
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg.rows import dict_row

    with _reaching(url):
        conn = await psycopg.AsyncConnection.connect(
            libpq_url(url), autocommit=True, prepare_threshold=0, row_factory=dict_row
        )
    stack.push_async_callback(conn.close)
    saver = AsyncPostgresSaver(conn)
    await saver.setup()
    return saver
