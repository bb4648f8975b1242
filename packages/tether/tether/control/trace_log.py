"""A run's trace, kept beside its checkpoints as an append-only log.

The trace (every model call, tool call and decision) is streamed by the graph, not stored in
its state, so checkpoints stay small and flat however long a run is. ``Agent`` appends each
node's events here after the node's checkpoint is written, so ``tether runs show`` can list a
saved run's steps, across resumes and processes.
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
)


class SqlTraceLog:
    """Trace events per thread in any SQLAlchemy database (SQLite or PostgreSQL)."""

    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine
        _metadata.create_all(engine)

    def append(self, thread_id: str, events: list[TraceEvent]) -> None:
        if not events:
            return
        rows = [
            {
                "thread_id": thread_id,
                "step": int(e["step"]),
                "event": str(e["event"])[:40],
                "detail": json.dumps(e["detail"], ensure_ascii=False, default=str),
            }
            for e in events
        ]
        with self._engine.begin() as conn:
            conn.execute(_events.insert(), rows)

    def read(self, thread_id: str) -> list[TraceEvent]:
        query = sa.select(_events).where(_events.c.thread_id == thread_id).order_by(_events.c.id)
        with self._engine.connect() as conn:
            rows: list[Any] = list(conn.execute(query))
        return [{"step": r.step, "event": r.event, "detail": json.loads(r.detail)} for r in rows]
