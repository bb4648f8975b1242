"""A tool call as tether's middleware read it (its proposal, ToolMessage, outcome and step
record) and the tool hook every middleware with a tool step uses. A call's outcome comes
from what no model or tool text can forge: the ToolMessage's ``status``, the outcome tether
wrote itself (its per-call record), a tether tool's ``ToolOutput`` artifact. A tool's text
is data only (the final-answer check's grounds), never whether the call failed."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import tether.decisions as decisions
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langgraph.errors import GraphBubbleUp
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command
from tether import AgentSettings
from tether.decisions import LOOP_ORIGIN, TOOL_ERROR_TYPES, Proposal, StepRecord, ToolResult
from tether.llm import call_fingerprint
from tether.tools import ToolOutput

from langchain_tether.calls import ToolCallRecord, tool_call
from langchain_tether.common import fields, packed, step_of
from langchain_tether.drive import Steps, adrive, drive

ToolResponse = ToolMessage | Command[Any]
"""A tool call's answer, as LangChain's tool hooks declare it."""
ToolAnswer = ToolResponse | list[ToolResponse]
"""A tool call's answer as ToolNode really passes it on: a tool may return a list of them."""
ToolHandler = Callable[[ToolCallRequest], ToolResponse]
AsyncToolHandler = Callable[[ToolCallRequest], Awaitable[ToolResponse]]
Delayed = tuple[ToolCallRequest, float]
"""A tool call to run, and the seconds to wait first (a replay's backoff)."""


def proposal_of(request: ToolCallRequest, record: ToolCallRecord | None = None) -> Proposal:
    """The call as the loop's decisions see it: tool, arguments and fingerprint, and whether
    the tool is registered (a failure's record names its tool only then); read once for the
    tether wrappers of one call (``record``), which saves 0.9% of a run (0.8 M instructions)."""
    if record is not None:
        record.proposal = record.proposal or proposal_of(request)
        return {**record.proposal}
    call, tool = request.tool_call, request.tool
    name, arguments = call["name"], dict(call.get("args") or {})
    return {
        "kind": "action",
        "thought": "",
        "tool": name,
        "arguments": arguments,
        "fingerprint": call_fingerprint(tool, name, arguments),
        "registered": tool is not None,
    }


def tool_message(result: ToolAnswer, call_id: str | None) -> ToolMessage | None:
    """The ToolMessage a tool call's handler answered with (inside a Command, or an item of
    the list a tool may return, too)."""
    if isinstance(result, ToolMessage):
        return result
    if isinstance(result, list):
        for item in result:
            found = tool_message(item, call_id)
            if found is not None and found.tool_call_id == call_id:
                return found
        return None
    update = result.update if isinstance(result.update, dict) else {}
    messages = update.get("messages", [])
    for message in messages if isinstance(messages, list) else []:
        if isinstance(message, ToolMessage) and message.tool_call_id == call_id:
            return message
    return None


def tool_result(
    message: ToolMessage | None, tool: BaseTool | None, call: ToolCallRecord
) -> ToolResult:
    """The call's outcome as the loop records it: the one tether wrote, else a tether tool's
    :class:`~tether.tools.ToolOutput` (its artifact), else the message's status."""
    if call.result is not None:
        return call.result
    if message is None:
        return {"status": "error", "message": "", "meta": {"error_type": "tool_error"}}
    output = message.artifact
    if isinstance(output, ToolOutput):
        if output.status == "success":
            return {"status": "success", "data": output.data, "meta": {}}
        kind = output.error_type if output.error_type in TOOL_ERROR_TYPES else "tool_error"
        return {"status": "error", "message": output.message, "meta": {"error_type": kind}}
    if message.status == "error":
        kind = "unknown_tool" if tool is None else "tool_error"
        return {"status": "error", "message": message.text, "meta": {"error_type": kind}}
    return {"status": "success", "data": data_of(message.text), "meta": {}}


def gate_result(gate: str) -> ToolResult:
    """The outcome of a call tether answered in place of running it."""
    kind = "refused" if gate == "refuse" else gate
    return {"status": "error", "message": "", "meta": {"error_type": kind, "origin": LOOP_ORIGIN}}


def step_record(
    request: ToolCallRequest, result: ToolResult, settings: AgentSettings, call: ToolCallRecord
) -> StepRecord:
    """The step the call makes, as :func:`tether.decisions.classify` judges it (a call tether
    answered itself is the gate's recall, repeat or refusal)."""
    proposal = proposal_of(request, call)
    kind = result["meta"].get("error_type")
    if result["meta"].get("origin") == LOOP_ORIGIN and kind in ("recall", "repeat"):
        proposal["gate"] = kind
    return decisions.classify(step_of(request.state), proposal, result, None, settings)


def data_of(text: str) -> Any:
    """The tool's text as JSON, else as it is: never an error (a text nested too deep for
    the parser is taken as text)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


def with_update(result: ToolAnswer, call_id: str | None, update: dict[str, Any]) -> ToolAnswer:
    """The handler's answer with ``update`` written beside it (into its Command, when an
    inner middleware answered with one; as a Command of its own after a tool's list)."""
    if isinstance(result, ToolMessage):
        return Command(update=packed({"messages": [result], **update}))
    if isinstance(result, list):
        found = tool_message(result, call_id)
        return [*result, Command(update=packed(update))] if found else result
    if isinstance(result.update, dict) and not result.goto and tool_message(result, call_id):
        return Command(update=packed({**result.update, **update}), graph=result.graph)
    return result  # an answer tether cannot read: passed on as it is


class ToolStep:
    """A tool call read once by one middleware's hook: its ToolMessage, outcome and record."""

    def __init__(
        self, request: ToolCallRequest, answer: ToolAnswer, call: ToolCallRecord, latency: float
    ) -> None:
        self.request, self.answer, self.call, self.latency = request, answer, call, latency
        self.message = tool_message(answer, request.tool_call["id"])
        self.result = tool_result(self.message, request.tool, call)

    def record(self, settings: AgentSettings) -> StepRecord:
        """The step record the call makes."""
        return step_record(self.request, self.result, settings, self.call)


class ToolHooks:
    """A middleware's tool hook in steps: :meth:`tool_answer` (an answer in place of the
    call), :meth:`tool_replay` (the call run again after an exception), :meth:`tool_failed`
    (the exception as an answer, or raised on) and :meth:`tool_update` (what it writes
    beside the answer)."""

    def tool_answer(self, request: ToolCallRequest, call: ToolCallRecord) -> ToolResponse | None:
        """The answer to a call that is not run; None to run it."""
        return None

    def tool_replay(self, request: ToolCallRequest, exc: Exception, attempt: int) -> float | None:
        """Seconds to wait before the call runs again in place; None to offer the exception
        to :meth:`tool_failed`."""
        return None

    def tool_failed(
        self, request: ToolCallRequest, exc: Exception, call: ToolCallRecord
    ) -> ToolResponse:
        """The handler's exception as an answer, or raised on (never an interrupt's)."""
        raise exc

    def tool_update(self, step: ToolStep) -> dict[str, Any] | None:
        """This middleware's own fields to write beside the answer."""
        return None

    def tool_steps(self, request: ToolCallRequest) -> Steps[Delayed, ToolResponse, ToolResponse]:
        """The tool hook, for a sync or async handler alike (:mod:`langchain_tether.drive`):
        yields the call to run (as it came) and the delay before it. The hooks read it with
        the private fields as the state's own keys: built once for tether's wrappers of a call,
        and not by ``override``, which builds the runtime again (together 0.1 M instructions a
        step; benchmarks/middleware_overhead.py --instructions)."""
        started = time.perf_counter()
        with tool_call(request.tool_call["id"]) as call:
            if call.read is None or call.read[0] is not request:
                state, runtime = fields(request.state), request.runtime
                read = ToolCallRequest(request.tool_call, request.tool, state, runtime)
                call.read = (request, read)
            read = call.read[1]
            answer, attempt, delay = self.tool_answer(read, call), 0, 0.0
            while answer is None:
                attempt += 1
                try:
                    answer = yield request, delay
                except GraphBubbleUp:
                    raise
                except Exception as exc:
                    wait = self.tool_replay(read, exc, attempt)
                    if wait is None:
                        answer = self.tool_failed(read, exc, call)
                    delay = wait or 0.0
            return self._updated(read, answer, call, started)

    def wrap_tool_call(self, request: ToolCallRequest, handler: ToolHandler) -> ToolResponse:
        def delayed(call: Delayed) -> ToolResponse:
            if call[1] > 0:
                time.sleep(call[1])
            return handler(call[0])

        return drive(self.tool_steps(request), delayed)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: AsyncToolHandler
    ) -> ToolResponse:
        async def delayed(call: Delayed) -> ToolResponse:
            if call[1] > 0:
                await asyncio.sleep(call[1])
            return await handler(call[0])

        return await adrive(self.tool_steps(request), delayed)

    def _updated(
        self, request: ToolCallRequest, answer: ToolAnswer, call: ToolCallRecord, started: float
    ) -> ToolResponse:
        step = ToolStep(request, answer, call, time.perf_counter() - started)
        if step.message is None:
            return answer  # type: ignore[return-value]  # an answer tether cannot read
        update = self.tool_update(step)
        out = with_update(answer, request.tool_call["id"], update) if update else answer
        return out  # type: ignore[return-value]  # ToolNode takes a tool's list as well
