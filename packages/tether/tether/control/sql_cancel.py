"""Cancel flags in a SQL table beside the checkpoints (SQLite file or PostgreSQL)."""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa

_metadata = sa.MetaData()
_flags = sa.Table(
    "tether_cancellations",
    _metadata,
    sa.Column("thread_id", sa.String(200), primary_key=True),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("requested_at", sa.String(40), nullable=False),
)


class SqlCancelStore:
    """Cancel flags in any SQLAlchemy database (the same SQLite file as the checkpoints, or
    PostgreSQL), so another process can stop a run."""

    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine
        _metadata.create_all(self._engine)

    def request(self, thread_id: str, reason: str) -> None:
        now = datetime.now(UTC).isoformat(timespec="seconds")
        with self._engine.begin() as conn:
            conn.execute(_flags.delete().where(_flags.c.thread_id == thread_id))
            conn.execute(
                _flags.insert().values(thread_id=thread_id, reason=reason, requested_at=now)
            )

    def requested(self, thread_id: str) -> str | None:
        with self._engine.connect() as conn:
            row = conn.execute(
                sa.select(_flags.c.reason).where(_flags.c.thread_id == thread_id)
            ).first()
        return None if row is None else str(row[0])

    def clear(self, thread_id: str) -> None:
        with self._engine.begin() as conn:
            conn.execute(_flags.delete().where(_flags.c.thread_id == thread_id))
