"""AsyncAgent: :class:`~tether.agent.Agent`'s operations as coroutines, on the event loop.

The graph is driven with ``astream``/``aget_state``, so the model and tools are awaited; the
rest is Agent's (:mod:`tether.agent_base`). Its store (from
:func:`~tether.control.open_async_run_store`) has Agent's tables: a run started by one can be
resumed, cancelled or shown by the other.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any, cast

from tether.agent_base import (
    CANCEL_REASON,
    AgentBase,
    Drive,
    RunObserver,
    RunOutline,
    RunResult,
    outline,
    result_of,
)
from tether.control.runs import RunSummary, alist_runs
from tether.control.store import AsyncRunStore
from tether.state import TraceEvent

__all__ = ["AsyncAgent"]


class AsyncAgent(AgentBase[AsyncRunStore]):
    """tether's graph bound to an AsyncRunStore: Agent's arguments (``asleep`` is what backoff
    awaits) and methods, as coroutines with the same results and errors."""

    # --- running ----------------------------------------------------------------------------
    async def run(
        self,
        task: str,
        *,
        thread_id: str | None = None,
        context: dict[str, Any] | None = None,
        observer: RunObserver | None = None,
    ) -> RunResult:
        """:meth:`Agent.run <tether.agent.Agent.run>`: a new run, to its end or first pause."""
        thread_id = thread_id or uuid.uuid4().hex
        self._open(thread_id, await self._snapshot(thread_id))
        await asyncio.to_thread(self.store.cancels.clear, thread_id)
        return await self._drive({"task": task}, Drive(thread_id, context, observer))

    async def resume(
        self,
        thread_id: str,
        answer: Any = None,
        *,
        context: dict[str, Any] | None = None,
        observer: RunObserver | None = None,
    ) -> RunResult:
        """:meth:`Agent.resume <tether.agent.Agent.resume>`: answer a saved run's approval
        request, or pick it up after a crash; a bad answer leaves the run as it was."""
        payload = self._resume_input(thread_id, await self._require(thread_id), answer)
        if isinstance(payload, RunResult):
            return payload
        return await self._drive(payload, Drive(thread_id, context, observer))

    async def status(self, thread_id: str) -> RunResult:
        """:meth:`Agent.status <tether.agent.Agent.status>`: where a saved run stands."""
        return result_of(thread_id, await self._require(thread_id))

    async def cancel(self, thread_id: str, reason: str = CANCEL_REASON) -> None:
        """:meth:`Agent.cancel <tether.agent.Agent.cancel>`: stop a run (in any process)
        before its next model call."""
        await self._require(thread_id)
        await asyncio.to_thread(self.store.cancels.request, thread_id, reason)

    # --- inspecting -------------------------------------------------------------------------
    async def runs(self) -> list[RunSummary]:
        return await alist_runs(self.store.checkpointer)

    async def show(self, thread_id: str) -> RunOutline:
        """:meth:`Agent.show <tether.agent.Agent.show>`: outcome, usage, one line a step."""
        return outline(thread_id, await self._require(thread_id), await self.trace(thread_id))

    async def trace(self, thread_id: str) -> list[TraceEvent]:
        """:meth:`Agent.trace <tether.agent.Agent.trace>`: a saved run's trace events."""
        return await asyncio.to_thread(self.store.trace.read, thread_id)

    # --- internals --------------------------------------------------------------------------
    async def _snapshot(self, thread_id: str) -> Any:
        return await self.graph.aget_state(self._config(thread_id))

    async def _require(self, thread_id: str) -> Any:
        return self._known(thread_id, await self._snapshot(thread_id))

    async def _drive(self, payload: Any, drive: Drive) -> RunResult:
        chunks = self.graph.astream(payload, drive.config, **drive.options)
        async for mode, chunk in cast(AsyncIterator[tuple[str, Any]], chunks):
            drive.feed(mode, chunk)
        return result_of(drive.thread_id, await self._snapshot(drive.thread_id))
