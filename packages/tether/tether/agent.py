"""Agent: the loop with a run store, for runs that pause, resume, get cancelled or inspected.

``build_graph`` gives the bare compiled graph; ``Agent`` adds what an operator needs around
it: thread ids, approval answers checked before they reach the saved run, cancellation from
another process, and resuming after the process died. :class:`~tether.async_agent.AsyncAgent`
does the same on the event loop; what the two share is in :mod:`tether.agent_base`.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any, cast

from tether.agent_base import (
    CANCEL_REASON,
    AgentBase,
    Drive,
    RunObserver,
    RunOutline,
    RunResult,
    UnknownRunError,
    outline,
    result_of,
)
from tether.control.runs import RunSummary, list_runs
from tether.control.store import RunStore
from tether.state import TraceEvent

__all__ = ["Agent", "RunObserver", "RunResult", "UnknownRunError"]


class Agent(AgentBase[RunStore]):
    """tether's graph bound to a RunStore (SQLite file or PostgreSQL)."""

    # --- running ----------------------------------------------------------------------------
    def run(
        self,
        task: str,
        *,
        thread_id: str | None = None,
        context: dict[str, Any] | None = None,
        observer: RunObserver | None = None,
    ) -> RunResult:
        """Start a run: on a new thread, or the next message of a thread whose run finished."""
        thread_id = thread_id or uuid.uuid4().hex
        self._open(thread_id, self._snapshot(thread_id))
        self.store.cancels.clear(thread_id)
        return self._drive({"task": task}, Drive(thread_id, context, observer))

    def resume(
        self,
        thread_id: str,
        answer: Any = None,
        *,
        context: dict[str, Any] | None = None,
        observer: RunObserver | None = None,
    ) -> RunResult:
        """Continue a saved run: answer its approval request, or pick up after a crash.

        ``context`` changes settings (budget, limits) for the rest of the run. A bad answer
        raises ApprovalError and leaves the saved run exactly as it was.
        """
        payload = self._resume_input(thread_id, self._require(thread_id), answer)
        if isinstance(payload, RunResult):
            return payload
        return self._drive(payload, Drive(thread_id, context, observer))

    def status(self, thread_id: str) -> RunResult:
        """Where a saved run stands (finished, waiting for approval, or interrupted),
        without running anything."""
        return result_of(thread_id, self._require(thread_id))

    def cancel(self, thread_id: str, reason: str = CANCEL_REASON) -> None:
        """Ask a run (possibly in another process) to stop before its next model call."""
        self._require(thread_id)
        self.store.cancels.request(thread_id, reason)

    # --- inspecting -------------------------------------------------------------------------
    def runs(self) -> list[RunSummary]:
        return list_runs(self.store.checkpointer)

    def show(self, thread_id: str) -> RunOutline:
        """A saved run's outcome, usage and one line per step."""
        return outline(thread_id, self._require(thread_id), self.trace(thread_id))

    def trace(self, thread_id: str) -> list[TraceEvent]:
        """Every trace event of a saved run, oldest first (across resumes)."""
        return self.store.trace.read(thread_id)

    # --- internals --------------------------------------------------------------------------
    def _snapshot(self, thread_id: str) -> Any:
        return self.graph.get_state(self._config(thread_id))

    def _require(self, thread_id: str) -> Any:
        return self._known(thread_id, self._snapshot(thread_id))

    def _drive(self, payload: Any, drive: Drive) -> RunResult:
        chunks = self.graph.stream(payload, drive.config, **drive.options)
        for mode, chunk in cast(Iterator[tuple[str, Any]], chunks):  # (mode, chunk) pairs
            drive.feed(mode, chunk)
        return result_of(drive.thread_id, self._snapshot(drive.thread_id))
