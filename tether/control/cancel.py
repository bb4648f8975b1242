"""Stop a run from outside: a cancel flag in the run store, checked before every model call.

The loop sees only :class:`CancelStore`; the SQL implementation that the run store uses is in
:mod:`tether.control.sql_cancel`, so the core does not import SQLAlchemy.
"""

from __future__ import annotations

from typing import Protocol


class CancelStore(Protocol):
    def request(self, thread_id: str, reason: str) -> None: ...
    def requested(self, thread_id: str) -> str | None: ...
    def clear(self, thread_id: str) -> None: ...
