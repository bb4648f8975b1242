"""Agent: the loop with a run store, for runs that pause, resume, get cancelled or inspected.

``build_graph`` gives the bare compiled graph; ``Agent`` adds what an operator needs around
it: thread ids, approval answers checked before they reach the saved run, cancellation from
another process, and resuming after the process died.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, cast

from langchain_core.language_models import BaseChatModel
from langgraph.types import Command, StreamMode

from tether.control.approval import (
    ApprovalError,
    HITLRequest,
    is_approval_request,
    parse_decision,
    requested_tool,
)
from tether.control.runs import RunSummary, list_runs, step_lines
from tether.control.store import RunStore
from tether.decisions.rules import Rule
from tether.errors import TetherError
from tether.loop.builder import build_graph
from tether.settings import AgentSettings
from tether.state import TraceEvent
from tether.tools.registry import ToolRegistry


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
    state: dict[str, Any]
    pending: HITLRequest | None = None

    @property
    def status(self) -> str:
        return str(self.state.get("status", "running"))

    @property
    def finished(self) -> bool:
        return self.pending is None and self.status != "running"


class Agent:
    """tether's graph bound to a RunStore (SQLite file or PostgreSQL)."""

    def __init__(
        self,
        settings: AgentSettings | None = None,
        *,
        store: RunStore,
        registry: ToolRegistry | None = None,
        model: BaseChatModel | None = None,
        rules: Sequence[Rule] = (),
        sleep: Callable[[float], None] = time.sleep,
        seed: int | None = None,
    ) -> None:
        self.store = store
        self.registry = registry if registry is not None else ToolRegistry()
        self.graph = build_graph(
            settings,
            model=model,
            registry=self.registry,
            checkpointer=store.checkpointer,
            cancel_store=store.cancels,
            rules=rules,
            sleep=sleep,
            seed=seed,
        )

    # --- running ----------------------------------------------------------------------------
    def run(
        self,
        task: str,
        *,
        thread_id: str | None = None,
        context: dict[str, Any] | None = None,
        observer: RunObserver | None = None,
    ) -> RunResult:
        """Start a new run on a new (or given, unused) thread."""
        thread_id = thread_id or uuid.uuid4().hex
        if self._snapshot(thread_id).values:
            raise TetherError(f"thread {thread_id!r} already holds a run: resume it instead")
        self.store.cancels.clear(thread_id)
        return self._drive({"task": task}, thread_id, context, observer)

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
        snapshot = self._require(thread_id)
        pending = _pending(snapshot)
        if pending is not None:
            if answer is None:
                tool = requested_tool(pending)
                raise ApprovalError(f"run {thread_id} is waiting for approval of {tool}")
            self._check_answer(pending, answer)
            return self._drive(Command(resume=answer), thread_id, context, observer)
        if answer is not None:
            raise ApprovalError(f"run {thread_id} is not waiting for approval")
        if snapshot.values.get("status", "running") != "running":
            return RunResult(thread_id, dict(snapshot.values))  # already finished
        return self._drive(None, thread_id, context, observer)

    def status(self, thread_id: str) -> RunResult:
        """Where a saved run stands (finished, waiting for approval, or interrupted),
        without running anything."""
        snapshot = self._require(thread_id)
        return RunResult(thread_id, dict(snapshot.values), _pending(snapshot))

    def cancel(self, thread_id: str, reason: str = "stopped by the operator") -> None:
        """Ask a run (possibly in another process) to stop before its next model call."""
        self._require(thread_id)
        self.store.cancels.request(thread_id, reason)

    # --- inspecting -------------------------------------------------------------------------
    def runs(self) -> list[RunSummary]:
        return list_runs(self.store.checkpointer)

    def show(self, thread_id: str) -> dict[str, Any]:
        """A saved run's outcome, usage and one line per step."""
        snapshot = self._require(thread_id)
        values = dict(snapshot.values)
        return {
            "thread_id": thread_id,
            "task": values.get("task"),
            "status": values.get("status"),
            "reason": values.get("reason"),
            "answer": values.get("answer"),
            "steps": step_lines(self.store.trace.read(thread_id)),
            "usage": values.get("usage"),
            "pending_approval": _pending(snapshot),
            "next": list(snapshot.next),
        }

    # --- internals --------------------------------------------------------------------------
    def _config(self, thread_id: str) -> dict[str, Any]:
        return {"configurable": {"thread_id": thread_id}}

    def _snapshot(self, thread_id: str) -> Any:
        return self.graph.get_state(self._config(thread_id))  # type: ignore[arg-type]

    def _require(self, thread_id: str) -> Any:
        snapshot = self._snapshot(thread_id)
        if not snapshot.values:
            raise UnknownRunError(f"no saved run with thread id {thread_id!r}")
        return snapshot

    def _check_answer(self, pending: HITLRequest, answer: Any) -> None:
        tool = requested_tool(pending)
        decision = parse_decision(answer, tool)
        if decision["type"] == "edit":
            problem = self.registry.check_arguments(tool, decision["edited_action"]["args"])
            if problem:
                raise ApprovalError(f"edited arguments rejected: {problem}")

    def trace(self, thread_id: str) -> list[TraceEvent]:
        """Every trace event of a saved run, oldest first (across resumes)."""
        return self.store.trace.read(thread_id)

    def _drive(
        self,
        payload: Any,
        thread_id: str,
        context: dict[str, Any] | None,
        observer: RunObserver | None,
    ) -> RunResult:
        modes: list[StreamMode] = ["custom", "updates"]
        if observer:
            modes.append("messages")
        pending: list[TraceEvent] = []
        try:
            for mode, chunk in self._stream(payload, thread_id, context, modes):
                if mode == "custom":
                    pending.append(chunk)
                    if observer:
                        observer.event(chunk)
                elif mode == "updates":  # a node finished and its checkpoint is written
                    self.store.trace.append(thread_id, pending)
                    pending = []
                elif observer:
                    message, meta = chunk
                    if meta.get("langgraph_node") == "think" and message.text:
                        observer.token(message.text)
        finally:
            self.store.trace.append(thread_id, pending)
        snapshot = self._snapshot(thread_id)
        return RunResult(thread_id, dict(snapshot.values), _pending(snapshot))

    def _stream(
        self,
        payload: Any,
        thread_id: str,
        context: dict[str, Any] | None,
        modes: list[StreamMode],
    ) -> Iterator[tuple[str, Any]]:
        config: Any = self._config(thread_id)
        # "sync": each step is on disk before the next starts, so a crash loses at most the
        # step in flight (and side-effecting tools are idempotent per run id).
        chunks = self.graph.stream(
            payload, config, context=context, stream_mode=modes, durability="sync"
        )
        yield from cast(Iterator[tuple[str, Any]], chunks)  # a list of modes yields pairs


def _pending(snapshot: Any) -> HITLRequest | None:
    for task in snapshot.tasks:
        for item in task.interrupts:
            if is_approval_request(item.value):
                return cast(HITLRequest, item.value)
    return None
