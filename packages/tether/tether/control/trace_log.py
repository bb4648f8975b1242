"""A run's trace, kept beside its checkpoints as an append-only log.

The trace (every model call, tool call and decision) is streamed by the graph, not stored in
its state, so checkpoints stay small and flat however long a run is. A node of an ``Agent``'s
graph saves its events here before it returns, so before its writes are saved, keyed by its
superstep: a node run again after a kill replaces them, and one whose writes were saved is
not run again, so each step's events are here exactly once, across resumes and processes.
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa

from tether.state import TraceEvent

_metadata = sa.MetaData()
_events = sa.Table(
    "tether_trace",
    _metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("thread_id", sa.String(200), nullable=False, index=True),
    sa.Column("step", sa.Integer, nullable=False),
    sa.Column("event", sa.String(40), nullable=False),
    sa.Column("detail", sa.Text, nullable=False),
    sa.Column("superstep", sa.Integer, nullable=True),  # LangGraph's step of the node
)


class SqlTraceLog:
    """Trace events per thread in any SQLAlchemy database (SQLite or PostgreSQL)."""

    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine
        _metadata.create_all(engine)
        if "superstep" not in {c["name"] for c in sa.inspect(engine).get_columns(_events.name)}:
            with engine.begin() as conn:  # a store from before the column
                conn.execute(sa.text("ALTER TABLE tether_trace ADD COLUMN superstep INTEGER"))

    def append(self, thread_id: str, superstep: int, events: list[TraceEvent]) -> None:
        """Save a node's ``events``, replacing any saved for its ``superstep`` before."""
        rows = [
            {
                "thread_id": thread_id,
                "step": int(e["step"]),
                "event": str(e["event"])[:40],
                "detail": json.dumps(e["detail"], ensure_ascii=False, default=str),
                "superstep": superstep,
            }
            for e in events
        ]
        mine = (_events.c.thread_id == thread_id) & (_events.c.superstep == superstep)
        with self._engine.begin() as conn:
            conn.execute(_events.delete().where(mine))
            if rows:
                conn.execute(_events.insert(), rows)

    def read(self, thread_id: str) -> list[TraceEvent]:
        query = sa.select(_events).where(_events.c.thread_id == thread_id).order_by(_events.c.id)
        with self._engine.connect() as conn:
            rows: list[Any] = list(conn.execute(query))
        return [{"step": r.step, "event": r.event, "detail": json.loads(r.detail)} for r in rows]
