"""Stop a run from outside: a cancel flag in the run store, checked before every model call.

The loop sees only :class:`CancelStore`; the SQL implementation that the run store uses is in
:mod:`tether.control.sql_cancel`, so the core does not import SQLAlchemy.

Why not LangGraph's own cancellation: that is a feature of its server (``langgraph dev`` or
the platform: ``client.runs.cancel``), which a run started from Python or the ``tether``
command does not have. A flag beside the checkpoints can be set by any process that can
reach the run store, and the run stops at its next step with status ``cancelled`` and a
resumable checkpoint. Runs served by ``langgraph dev`` can use the server's cancel as well.
"""

from __future__ import annotations

from typing import Protocol


class CancelStore(Protocol):
    def request(self, thread_id: str, reason: str) -> None: ...
    def requested(self, thread_id: str) -> str | None: ...
    def clear(self, thread_id: str) -> None: ...
