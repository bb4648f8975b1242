"""The shape of a node: one piece of work with a sync and a native async implementation.

LangGraph runs a plain sync function in a thread under ``ainvoke``; a :class:`Node` is a
Runnable with both ``invoke`` and ``ainvoke``, so async runs await the model and the tools
directly. Both go through the same pure steps; only the I/O differs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from langchain_core.runnables import Runnable, RunnableConfig
from langgraph.config import get_config, get_stream_writer
from langgraph.runtime import get_runtime
from tether.nodes.deps import Deps
from tether.settings import AgentSettings
from tether.state import AgentState, TraceEvent
from tether.vocabulary import TraceEventName

T = TypeVar("T")
_collected: ContextVar[list[TraceEvent] | None] = ContextVar("tether_events", default=None)


class Node(Runnable[AgentState, dict[str, Any]]):
    """A graph node over the graph's shared :class:`Deps`."""

    def __init__(self, deps: Deps) -> None:
        self.deps = deps

    def settings(self) -> AgentSettings:
        """This run's settings: the graph's, with the run's context applied."""
        return self.deps.settings_for(get_runtime().context)

    def run(self, state: AgentState, settings: AgentSettings) -> dict[str, Any]:
        raise NotImplementedError

    async def arun(self, state: AgentState, settings: AgentSettings) -> dict[str, Any]:
        """Nodes without I/O of their own share the sync implementation."""
        return await self.off_loop(self.run, state, settings)

    async def off_loop(self, work: Callable[..., T], *args: Any) -> T:
        """``work(*args)`` in a thread: a node's own work may wait on I/O (starting the
        embedded server, a server tokenizer's HTTP calls, the run store's cancel flags), and
        the event loop must never block. The hop costs about 1 ms a step."""
        return await asyncio.to_thread(work, *args)

    def invoke(
        self, input: AgentState, config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        with _collecting() as events:
            update = self.run(input, self.settings())
        if self.deps.trace_log is not None:
            self.deps.trace_log.append(*_key(), events)
        return update

    async def ainvoke(
        self, input: AgentState, config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        with _collecting() as events:
            update = await self.arun(input, self.settings())
        if self.deps.trace_log is not None:
            await asyncio.to_thread(self.deps.trace_log.append, *_key(), events)
        return update


@contextmanager
def _collecting() -> Iterator[list[TraceEvent]]:
    """The events a node emits, kept to be saved once it has finished (not if it raised, or
    paused for approval: it runs again on resume)."""
    events: list[TraceEvent] = []
    token = _collected.set(events)
    try:
        yield events
    finally:
        _collected.reset(token)


def _key() -> tuple[str, int]:
    """The run's thread and the node's superstep (the same when a killed node runs again)."""
    config = get_config()
    return str(config["configurable"]["thread_id"]), int(config["metadata"]["langgraph_step"])


def emit(step: int, event: TraceEventName, detail: dict[str, Any]) -> None:
    """Stream a trace event (``stream_mode="custom"``); nothing is stored in the state.

    A new event is declared (and documented) in :data:`~tether.state.TraceEventName` first,
    and the console's table (``tether_cli.console.EVENT_HANDLERS``) says how it is shown."""
    record: TraceEvent = {"step": step, "event": event, "detail": detail}
    get_stream_writer()(record)
    if (events := _collected.get()) is not None:
        events.append(record)
