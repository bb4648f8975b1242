"""A tool call's hooks as one layer: the steps tether's middleware take around a call (an
answer in place of it, its replay after an exception, its failure, what each writes beside
its answer), run for several middleware at once, with the answer read once for all of them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any, cast

from langchain_core.messages import ToolMessage
from langgraph.errors import GraphBubbleUp
from langgraph.prebuilt.tool_node import ToolCallRequest
from tether.settings import AgentSettings
from tether.state import StepRecord, ToolResult

from langchain_tether.common import (
    AsyncToolHandler,
    ToolAnswer,
    ToolHandler,
    ToolResponse,
    step_record,
    tool_message,
    tool_result,
    with_update,
)
from langchain_tether.kept import signed


class ToolReading:
    """A tool call's answer as tether's middleware read it: its ToolMessage, outcome and step
    record, each read once for every middleware that reads them (one layer reads the
    answer for several)."""

    __slots__ = ("_message", "_outcome", "_read", "_record", "request", "result", "started")

    def __init__(self, request: ToolCallRequest, result: ToolAnswer, started: float) -> None:
        self.request, self.result = request, result
        self.started = started  # when the layer around the call began (time.perf_counter)
        self._message: ToolMessage | None = None
        self._read = False
        self._outcome: ToolResult | None = None
        self._record: tuple[AgentSettings, StepRecord] | None = None

    def message(self) -> ToolMessage | None:
        """The ToolMessage the call was answered with (:func:`tool_message`)."""
        if not self._read:
            self._message = tool_message(self.result, self.request.tool_call["id"])
            self._read = True
        return self._message

    def outcome(self) -> ToolResult:
        """The call's outcome (:func:`tool_result`)."""
        if self._outcome is None:
            self._outcome = tool_result(self.message(), self.request.tool)
        return self._outcome

    def record(self, settings: AgentSettings) -> StepRecord:
        """The step the call makes (:func:`step_record`), a copy of its own for each caller."""
        kept = self._record
        if kept is None or kept[0] is not settings:
            kept = self._record = (settings, step_record(self.request, self.outcome(), settings))
        return {**kept[1]}


@signed
class ToolSteps:
    """A middleware whose tool hook is in steps: :meth:`tool_answer` (an answer in place of
    the call), :meth:`tool_replay` (the call run again after an exception), :meth:`tool_failed`
    (the exception as an answer, or raised on), and :meth:`tool_update` (what it writes
    beside the answer). Composed, several of them run their steps around the call in one
    layer (:class:`ToolLayer`), as their hooks would nested, the first outermost: one reading
    of the answer, one Command, no layer each."""

    timed = False
    """Its update reads the clock (the call's latency since :attr:`ToolReading.started`)."""

    def tool_answer(self, request: ToolCallRequest) -> ToolResponse | None:
        """The answer to a call that is not run; None to run it."""
        return None

    def tool_replay(self, request: ToolCallRequest, exc: Exception, attempt: int) -> float | None:
        """Seconds to wait before the call runs again in place, its ``attempt``-th run having
        raised ``exc``; None to offer the exception to :meth:`tool_failed`."""
        return None

    def tool_failed(self, request: ToolCallRequest, exc: Exception) -> ToolResponse:
        """The handler's exception as an answer, or raised on (never an interrupt's)."""
        raise exc

    def tool_update(self, reading: ToolReading) -> dict[str, Any] | None:
        """This middleware's own fields to write beside the answer."""
        raise NotImplementedError

    # LangChain declares a hook's answer a ToolMessage or a Command; ToolNode takes the list a
    # tool may return as well, and the layer passes it on.

    def wrap_tool_call(self, request: ToolCallRequest, handler: ToolHandler) -> ToolResponse:
        return cast(ToolResponse, self._layer().wrap_tool_call(request, handler))

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: AsyncToolHandler
    ) -> ToolResponse:
        return cast(ToolResponse, await self._layer().awrap_tool_call(request, handler))

    def _layer(self) -> ToolLayer:
        layer: ToolLayer | None = self.__dict__.get("_tool_layer")
        if layer is None:
            layer = self.__dict__["_tool_layer"] = ToolLayer([self])
        return layer


def _overrides(part: ToolSteps, step: str) -> bool:
    return getattr(type(part), step) is not getattr(ToolSteps, step)


def only_updates(part: ToolSteps) -> bool:
    """The part's tool hook only adds an update, read from the answer alone."""
    steps = ("tool_answer", "tool_replay", "tool_failed")
    return not (part.timed or any(_overrides(part, step) for step in steps))


class ToolLayer:
    """``parts`` (the first outermost) as one layer around a tool call: each part's answer in
    place of the call, outside in, until one answers; else the call, run again while a part
    wants it replayed after an exception, then its exception offered to each part, inside
    out; then each part's update, inside out (those of the parts inside one that answered
    are not written: they never ran)."""

    def __init__(self, parts: Sequence[ToolSteps]) -> None:
        self.parts = tuple(parts)
        self.answering = tuple(
            at for at, part in enumerate(parts) if _overrides(part, "tool_answer")
        )
        failing = [at for at, part in enumerate(parts) if _overrides(part, "tool_failed")]
        self.failing = tuple(reversed(failing))  # innermost first
        replaying = [part for part in parts if _overrides(part, "tool_replay")]
        self.replaying = tuple(reversed(replaying))  # innermost first
        grouped = 0  # the outermost parts that only add an update wrote theirs as one
        while grouped < len(parts) and only_updates(parts[grouped]):
            grouped += 1
        self.grouped = grouped

    def wrap_tool_call(self, request: ToolCallRequest, handler: ToolHandler) -> ToolAnswer:
        started = time.perf_counter()
        ran, answer = self._answer(request)
        attempt = 0
        while answer is None:
            attempt += 1
            try:
                answer = handler(request)
            except GraphBubbleUp:
                raise
            except Exception as exc:
                delay = self._replay(request, exc, attempt)
                if delay is None:
                    ran, answer = self._failed(request, exc)
                elif delay > 0:
                    time.sleep(delay)
        return self._updated(request, answer, ran, started)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: AsyncToolHandler
    ) -> ToolAnswer:
        started = time.perf_counter()
        ran, answer = self._answer(request)
        attempt = 0
        while answer is None:
            attempt += 1
            try:
                answer = await handler(request)
            except GraphBubbleUp:
                raise
            except Exception as exc:
                delay = self._replay(request, exc, attempt)
                if delay is None:
                    ran, answer = self._failed(request, exc)
                elif delay > 0:
                    await asyncio.sleep(delay)
        return self._updated(request, answer, ran, started)

    def _answer(self, request: ToolCallRequest) -> tuple[int, ToolAnswer | None]:
        """How many parts, outermost first, saw the call answered; the answer, if one gave
        it (then the parts from that one in add nothing)."""
        for at in self.answering:
            answer = self.parts[at].tool_answer(request)
            if answer is not None:
                return at, answer
        return len(self.parts), None

    def _replay(self, request: ToolCallRequest, exc: Exception, attempt: int) -> float | None:
        """The pause before the call runs again, as the innermost part that wants it run
        again says; None when none does. Only the call runs again: the parts' answers in
        place of it were asked once (the state they read has not changed)."""
        for part in self.replaying:
            delay = part.tool_replay(request, exc, attempt)
            if delay is not None:
                return delay
        return None

    def _failed(self, request: ToolCallRequest, exc: Exception) -> tuple[int, ToolAnswer]:
        """The answer the innermost part that takes the exception gives; how many parts,
        outermost first, saw an answer (those inside it raised: they add nothing)."""
        for at in self.failing:
            try:
                return at + 1, self.parts[at].tool_failed(request, exc)
            except Exception as raised:
                exc = raised
        raise exc

    def _updated(
        self, request: ToolCallRequest, answer: ToolAnswer, ran: int, started: float
    ) -> ToolAnswer:
        """The answer with the updates of the parts that ran, inside out, as each writes its
        own into the answer the one inside it returned."""
        call_id = request.tool_call["id"]
        reading = ToolReading(request, answer, started)
        if isinstance(answer, ToolMessage) and answer.tool_call_id != call_id:
            return self._unread(reading, ran)
        update: dict[str, Any] = {}
        for part in reversed(self.parts[:ran]):
            update |= part.tool_update(reading) or {}
        return with_update(answer, call_id, update) if update else answer

    def _unread(self, reading: ToolReading, ran: int) -> ToolAnswer:
        """An answer under another call's id: the first layer to write wraps it in a Command
        the layers outside cannot read (:func:`with_update`), so only its update stands. The
        outermost parts that only add an update write as one, every other part as a layer."""
        parts = self.parts[:ran]
        layers = [[part] for part in parts[self.grouped :]]
        if parts[: self.grouped]:
            layers.insert(0, list(parts[: self.grouped]))
        for layer in reversed(layers):
            update: dict[str, Any] = {}
            for part in reversed(layer):
                update |= part.tool_update(reading) or {}
            if update:
                return with_update(reading.result, reading.request.tool_call["id"], update)
        return reading.result
