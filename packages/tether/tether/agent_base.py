"""What :class:`~tether.agent.Agent` and :class:`~tether.async_agent.AsyncAgent` share: all
but the I/O (the graph bound to a run store, the checks before a resume, what a snapshot says,
the stream's routing). They differ only in ``stream``/``get_state`` or ``astream``/``aget_state``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore
from langgraph.types import Command, StreamMode
from typing_extensions import TypedDict

from tether.control.approval import (
    ApprovalError,
    HITLRequest,
    is_approval_request,
    requested_tool,
    usable_decision,
)
from tether.control.runs import step_lines
from tether.control.store import AsyncRunStore, RunStore
from tether.decisions.rules import Rule
from tether.errors import TetherError
from tether.graph.builder import build_graph
from tether.settings import AgentSettings
from tether.state import ZERO_USAGE, AgentState, TraceEvent, Usage
from tether.tools.registry import ToolRegistry, as_registry
from tether.vocabulary import Status, StopCause

CANCEL_REASON = "stopped by the operator"


class RunObserver(Protocol):
    """Watches a run live: trace events as the nodes emit them, and model tokens."""

    def event(self, event: TraceEvent) -> None: ...
    def token(self, text: str) -> None: ...


class UnknownRunError(TetherError, KeyError):
    """No saved run has this thread id."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass
class RunResult:
    """Where a run stands after a call: finished, or paused for approval."""

    thread_id: str
    state: AgentState
    """The run's whole saved state (buffers, counters, outcome)."""
    pending: HITLRequest | None = None
    """The approval request the run waits on, if it does."""

    @property
    def status(self) -> Status:
        """One of :data:`tether.STATUSES` (``running`` until the run ends)."""
        return self.state.get("status", "running")

    @property
    def answer(self) -> str | None:
        """The model's final answer, for a ``completed`` run; else None."""
        return self.state.get("answer")

    @property
    def cause(self) -> StopCause | None:
        """What ended the run (:data:`tether.StopCause`); None while it runs."""
        return self.state.get("cause")

    @property
    def reason(self) -> str:
        """Why the run ended (empty while it runs)."""
        return self.state.get("reason", "")

    @property
    def usage(self) -> Usage:
        """Tokens spent over the run."""
        return self.state.get("usage", ZERO_USAGE)

    @property
    def finished(self) -> bool:
        return self.pending is None and self.status != "running"


StoreT = TypeVar("StoreT", RunStore, AsyncRunStore)


class AgentBase(Generic[StoreT]):
    """tether's graph bound to a run store, and the parts of running it that do no I/O."""

    def __init__(
        self,
        settings: AgentSettings | dict[str, Any] | None = None,
        *,
        store: StoreT,
        registry: ToolRegistry | Iterable[Any] | None = None,
        model: BaseChatModel | None = None,
        rules: Sequence[Rule] = (),
        sleep: Callable[[float], None] = time.sleep,
        asleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        seed: int | None = None,
        tool_health: BaseStore | None = None,
    ) -> None:
        """``sleep``/``asleep`` are what backoff waits with in sync/async runs (tests pass
        recorders); ``seed`` fixes the backoff jitter; ``tool_health`` is the LangGraph store
        that shares tool health with other runs and workers (see :func:`tether.build_graph`)."""
        self.store: StoreT = store
        self.registry = as_registry(registry)
        self.graph = build_graph(
            settings,
            model=model,
            registry=self.registry,
            checkpointer=store.checkpointer,
            cancel_store=store.cancels,
            trace_log=store.trace,
            rules=rules,
            sleep=sleep,
            asleep=asleep,
            seed=seed,
            store=tool_health,
        )

    @staticmethod
    def _config(thread_id: str) -> RunnableConfig:
        return {"configurable": {"thread_id": thread_id}}

    @staticmethod
    def _open(thread_id: str, snapshot: Any) -> None:
        """Refuse a message on a thread whose run has not finished (waiting for an approval, or
        stopped part-way): it is resumed, not started over."""
        if snapshot.values and snapshot.next:
            raise TetherError(f"thread {thread_id!r} holds an unfinished run: resume it instead")

    @staticmethod
    def _known(thread_id: str, snapshot: Any) -> Any:
        """The snapshot of a saved run; UnknownRunError when the thread holds none."""
        if not snapshot.values:
            raise UnknownRunError(f"no saved run with thread id {thread_id!r}")
        return snapshot

    def _resume_input(
        self, thread_id: str, snapshot: Any, answer: Any
    ) -> RunResult | Command[Any] | None:
        """What resuming a saved run feeds the graph: the checked answer to its approval
        request, or None to pick up after a crash; or, for a finished run, its result (there
        is nothing to run). A bad answer raises ApprovalError before anything is written."""
        pending = pending_request(snapshot)
        if pending is not None:
            if answer is None:
                tool = requested_tool(pending)
                raise ApprovalError(f"run {thread_id} is waiting for approval of {tool}")
            decision = usable_decision(answer, requested_tool(pending), self.registry)
            return Command(resume={"decisions": [decision]})  # as read: a long message cut
        if answer is not None:
            raise ApprovalError(f"run {thread_id} is not waiting for approval")
        if snapshot.values.get("status", "running") != "running":
            return result_of(thread_id, snapshot)  # already finished
        return None


def pending_request(snapshot: Any) -> HITLRequest | None:
    """The approval request a saved run is paused on, if any."""
    for task in snapshot.tasks:
        for item in task.interrupts:
            if is_approval_request(item.value):
                return cast(HITLRequest, item.value)
    return None


def result_of(thread_id: str, snapshot: Any) -> RunResult:
    """Where the run in ``snapshot`` (a LangGraph StateSnapshot) stands."""
    return RunResult(thread_id, cast(AgentState, dict(snapshot.values)), pending_request(snapshot))


class RunOutline(TypedDict):
    """What ``show`` says of a saved run: its outcome, usage and one entry per step."""

    thread_id: str
    task: str | None
    status: Status | None
    cause: str | None
    reason: str | None
    answer: str | None
    steps: list[dict[str, Any]]
    usage: Usage | None
    pending_approval: HITLRequest | None
    next: list[str]
    """The nodes LangGraph runs next when the run is resumed (empty once it ended)."""


def outline(thread_id: str, snapshot: Any, trace: list[TraceEvent]) -> RunOutline:
    """A saved run's outcome, usage and one line per step."""
    values = dict(snapshot.values)
    return {
        "thread_id": thread_id,
        "task": values.get("task"),
        "status": values.get("status"),
        "cause": values.get("cause"),
        "reason": values.get("reason"),
        "answer": values.get("answer"),
        "steps": step_lines(trace),
        "usage": values.get("usage"),
        "pending_approval": pending_request(snapshot),
        "next": list(snapshot.next),
    }


class Drive:
    """One drive of the graph (a run or a resume, to its next pause or end): what to stream
    with, and the stream routed to the observer: trace events as they come, and tokens (the
    nodes save their events to the run store's trace log themselves)."""

    def __init__(
        self, thread_id: str, context: dict[str, Any] | None, observer: RunObserver | None
    ) -> None:
        self.thread_id = thread_id
        self.observer = observer
        self.config = AgentBase._config(thread_id)
        modes: list[StreamMode] = ["custom"]
        if observer:
            modes.append("messages")
        # "sync": each step is on disk before the next starts, so a crash loses at most the
        # step in flight (and side-effecting tools are idempotent per run id).
        self.options: dict[str, Any] = dict(context=context, stream_mode=modes, durability="sync")

    def feed(self, mode: str, chunk: Any) -> None:
        """Take one ``(mode, chunk)`` of the stream."""
        if self.observer is None:
            return
        if mode == "custom":
            self.observer.event(chunk)
        else:
            message, meta = chunk
            if meta.get("langgraph_node") == "think" and message.text:
                self.observer.token(message.text)
