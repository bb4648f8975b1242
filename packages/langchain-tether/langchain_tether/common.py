"""What tether's middleware share: the state they keep, how a run starts and how its step is
read, and how a run ends.

Every field is kept by a checkpoint, so a run resumed after an interrupt (or restarted after
a crash) still has it. A run's fields are reset lazily: the first model call of a new run
(:func:`starts_run`) reads them as blank and writes them blank, so no hook adds a graph node
of its own. ``tether_status`` and ``tether_reason`` are in the agent's output; every other
field is private (in neither its input nor its output schema). Fields several middleware
write in one step have a reducer, since LangGraph takes one plain value per field and step.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Annotated, Any, Literal, NotRequired, TypeVar

from langchain.agents.middleware.types import (
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    OmitFromInput,
    PrivateStateAttr,
    ResponseT,
)
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command, Overwrite
from tether.decisions import policy
from tether.llm.parsing import call_fingerprint
from tether.settings import AgentSettings
from tether.state import (
    STATUSES,
    TOOL_ERROR_TYPES,
    Proposal,
    StepRecord,
    ToolResult,
    Verdict,
    keep_window,
)
from tether.tools.envelope import LOOP_ORIGIN

from langchain_tether.kept import Reduced, memo, reused

T = TypeVar("T")

ToolResponse = ToolMessage | Command[Any]
"""A tool call's answer, as LangChain's tool hooks declare it."""
ToolAnswer = ToolResponse | list[ToolResponse]
"""A tool call's answer as ToolNode really passes it on: a tool may return a list of them."""
ToolHandler = Callable[[ToolCallRequest], ToolResponse]
AsyncToolHandler = Callable[[ToolCallRequest], Awaitable[ToolResponse]]

NOTE_ID = "tether-note-"
"""Ids of the messages tether adds to a model request (never to the state, but for the
final-answer check's note): ``tether-note-cap`` asks for the last answer."""
CAP_NOTE = f"{NOTE_ID}cap"
STOP_ID = f"{NOTE_ID}stop-"
"""Ids of the run's last message when tether ends it without an answer."""
MARK = "tether"
"""``additional_kwargs`` key of a ToolMessage tether wrote instead of running the call: the
gate's decision (``recall``, ``repeat``, ``refuse``), so every middleware reads the step as
the loop would. In an AIMessage's ``response_metadata``, the status of the run tether ended
with that reply (the outer wrappers take it as it is)."""
CLOSING = "tether_closing"
"""Key of a model request's state (never of the agent's state) holding the cap whose last
answer the request asks for, so the wrappers inside see why it was closed."""


def latest(current: Any, new: Any) -> Any:
    """Reducer: the newest value (several middleware may write the same value in one step)."""
    return new


window_of = reused(keep_window)
"""Reducer for a run's step records (:func:`tether.state.keep_window`), one object for every
field that keeps them, as LangGraph wants one reducer per field."""


def first_stop(current: Verdict | None, new: Verdict | None) -> Verdict | None:
    """Reducer for a pending stop: the first verdict holds (parallel tool calls may each
    bring one); None clears it."""
    return current if current is not None and new is not None else new


class TetherState(AgentState[ResponseT]):
    """The fields every tether middleware keeps."""

    tether_status: NotRequired[Annotated[str | None, OmitFromInput, Reduced(str | None, latest)]]
    """Set when tether ended the run: a status of :data:`tether.STATUSES`."""
    tether_cause: NotRequired[Annotated[str | None, OmitFromInput, Reduced(str | None, latest)]]
    """What ended it: a :data:`tether.StopCause`."""
    tether_reason: NotRequired[Annotated[str | None, OmitFromInput, Reduced(str | None, latest)]]
    """Why, in tether's words (numbers and the names of the calls involved)."""
    tether_step: NotRequired[Annotated[int, PrivateStateAttr, Reduced(int, latest)]]
    """Model calls made in this run (the loop's steps)."""
    tether_stop: NotRequired[
        Annotated[Verdict | None, PrivateStateAttr, Reduced(Verdict | None, first_stop)]
    ]
    """A stop decided while the tools ran, acted on at the next model call."""


RUN: dict[str, Any] = {
    "tether_status": None,
    "tether_cause": None,
    "tether_reason": None,
    "tether_step": 0,
    "tether_stop": None,
}
"""The shared fields at the start of a run."""


def starts_run(state: Mapping[str, Any]) -> bool:
    """This model call is a run's first: the conversation ends with the user's message (not
    a note of tether's, nor a summary SummarizationMiddleware wrote). Within a run a model
    call follows tool results, tether's own note, or a resume that continues the run."""
    messages = state.get("messages") or []
    last = messages[-1] if messages else None
    return (
        isinstance(last, HumanMessage)
        and not str(last.id or "").startswith(NOTE_ID)
        and last.additional_kwargs.get("lc_source") != "summarization"
    )


def run_view(state: Any, fresh: Callable[[Any], Mapping[str, Any]]) -> tuple[Any, dict[str, Any]]:
    """The state as this run sees it, and the update that starts the run: at a run's first
    model call, ``fresh(state)`` (the middleware's own fields as a run starts, an
    ``Overwrite`` for a field with a reducer; asked for then only) and the shared fields
    replace what the last run left."""
    if not starts_run(state):
        return state, {}
    update = {**RUN, **fresh(state)}
    blank = {k: v.value if isinstance(v, Overwrite) else v for k, v in update.items()}
    return {**state, **blank}, update


def step_of(state: Any) -> int:
    """The step (model call) of this run that proposed the calls now running."""
    return int(state.get("tether_step") or 0)


def counted(view: Any) -> dict[str, Any]:
    """The update that counts a model call (every middleware writes the same number)."""
    return {"tether_step": step_of(view) + 1}


def as_settings(settings: AgentSettings | None) -> AgentSettings:
    return settings if settings is not None else AgentSettings()


# --- notes on a model request -----------------------------------------------------------------


def with_note(request: ModelRequest[Any], text: str, name: str) -> ModelRequest[Any]:
    """The request with tether's note as a user message at the end (before the cap's note,
    when the request asks for the last answer). The state does not keep it: like the loop's
    notes, it is for this call only."""
    note = HumanMessage(text, id=f"{NOTE_ID}{name}")
    messages = list(request.messages)
    at = next((i for i, m in enumerate(messages) if m.id == CAP_NOTE), len(messages))
    return request.override(messages=[*messages[:at], note, *messages[at:]])


# --- ending a run -----------------------------------------------------------------------------


def stop_message(status: str) -> AIMessage:
    """The run's last message when tether ends it without an answer: tether's words only (the
    reason, which may name a tool's error, stays in ``tether_reason``)."""
    info = STATUSES.get(status)
    meaning = info.meaning if info else "stopped"
    return AIMessage(
        f"The run ended ({status}): {meaning}.",
        id=f"{STOP_ID}{uuid.uuid4()}",
        response_metadata={MARK: status},
    )


def ending(reply: AIMessage, status: str) -> AIMessage:
    """The reply tether ends the run with, marked so (its ``response_metadata``)."""
    return reply.model_copy(update={"response_metadata": {**reply.response_metadata, MARK: status}})


def ends_run(message: BaseMessage | None) -> bool:
    """The reply is one tether ended the run with (a stop message, or the answer taken at a
    cap or before a settled write)."""
    return isinstance(message, AIMessage) and MARK in message.response_metadata


def last_reply(messages: list[BaseMessage]) -> AIMessage | None:
    """A model response's reply: its last AIMessage."""
    return next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)


TetherPart = Literal["note", "cap_note", "stop", "recall", "refuse", "repeat"]
"""What tether wrote a message as (:func:`tether_part`)."""


def tether_part(message: BaseMessage) -> TetherPart | None:
    """What tether wrote ``message`` as, for those who read a run's messages afterwards (a
    trace viewer, ``tether replay``): a note to the model (the cap's own), the run's closing
    message, or a ToolMessage in place of a call's run; None for any other message. Nothing
    tether decides reads this: its control facts live in its state."""
    ident = str(message.id or "")
    if isinstance(message, ToolMessage):
        gate = message.additional_kwargs.get(MARK)
        return gate if gate in ("recall", "refuse", "repeat") else None
    if ident.startswith(NOTE_ID):
        return "cap_note" if ident == CAP_NOTE else "stop" if ident.startswith(STOP_ID) else "note"
    return None


def answer_of(state: Mapping[str, Any]) -> str | None:
    """The run's answer: the text of its last message, when the model wrote it (an answer
    tether asked for at a cap included); None when the run ended without one (tether's
    stop message, or a last message that is not the model's answer)."""
    messages = state.get("messages") or []
    last = messages[-1] if messages else None
    if not isinstance(last, AIMessage) or last.tool_calls or str(last.id).startswith(STOP_ID):
        return None
    return last.text or None


def responded(
    response: ModelResponse[Any], update: dict[str, Any]
) -> ModelResponse[Any] | ExtendedModelResponse[Any]:
    """The response with a wrapper's update. When a wrapper inside ended the run, the blank
    status a new run starts with is not written over the one it ended with."""
    if update.get("tether_status", "") is None and ends_run(last_reply(response.result)):
        update = {
            k: v
            for k, v in update.items()
            if k not in ("tether_status", "tether_cause", "tether_reason")
        }
    if not update:
        return response
    return ExtendedModelResponse(model_response=response, command=Command(update=update))


# --- a tool call and its outcome --------------------------------------------------------------


def proposal_of(request: ToolCallRequest) -> Proposal:
    """The call as the loop's decisions see it: tool, arguments and fingerprint, and whether
    the tool is registered (as the loop's think sets it: a failure's record names its tool
    only then, so a name the model invented never reaches a note)."""
    call, tool = request.tool_call, request.tool
    return {**memo("proposal", (call, tool), _read_proposal, call, tool)}


def _read_proposal(call: ToolCall, tool: BaseTool | None) -> Proposal:
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
        found = (
            item if isinstance(item, ToolMessage) else tool_message(item, call_id)
            for item in result
            if not isinstance(item, ToolMessage) or item.tool_call_id == call_id
        )
        return next((message for message in found if message is not None), None)
    update = result.update if isinstance(result.update, dict) else {}
    messages = update.get("messages", [])
    for message in messages if isinstance(messages, list) else []:
        if isinstance(message, ToolMessage) and message.tool_call_id == call_id:
            return message
    return None


def tool_result(message: ToolMessage | None, tool: BaseTool | None) -> ToolResult:
    """The call's outcome as the loop records it. A result tether wrote is the gate's; a
    tool's text shaped like a tether envelope (a tool of a tether registry) is read as one,
    though it may only claim a tool's own kinds of failure; else an error status fails the
    call (an unknown tool when no tool of that name is registered)."""
    return memo("result", (message, tool), _outcome, message, tool)


def _outcome(message: ToolMessage | None, tool: BaseTool | None) -> ToolResult:
    if message is None:
        return {"status": "error", "message": "", "meta": {"error_type": "tool_error"}}
    mark = message.additional_kwargs.get(MARK)
    if mark in ("recall", "repeat", "refuse"):
        meta = {"error_type": "refused" if mark == "refuse" else mark, "origin": LOOP_ORIGIN}
        return {"status": "error", "message": "", "meta": meta}
    data = _data(message.text)
    if isinstance(data, dict) and data.get("status") in ("success", "error") and "meta" in data:
        if data["status"] == "success":
            return {"status": "success", "data": data.get("data"), "meta": {}}
        kind = data["meta"].get("error_type") if isinstance(data["meta"], dict) else None
        kind = kind if kind in TOOL_ERROR_TYPES else "tool_error"
        return {
            "status": "error",
            "message": str(data.get("message", "")),
            "meta": {"error_type": kind},
        }
    if message.status == "error":
        kind = "unknown_tool" if tool is None else "tool_error"
        return {"status": "error", "message": message.text, "meta": {"error_type": kind}}
    return {"status": "success", "data": data, "meta": {}}


def step_record(
    request: ToolCallRequest, result: ToolResult, settings: AgentSettings
) -> StepRecord:
    """The step the call makes, as :func:`tether.decisions.policy.classify` judges it (a
    call tether answered itself is the gate's recall, repeat or refusal)."""
    step = step_of(request.state)
    key = (request.tool_call, request.tool, result, settings)
    return {**memo(step, key, _judged, step, request, result, settings)}


def _judged(
    step: int, request: ToolCallRequest, result: ToolResult, settings: AgentSettings
) -> StepRecord:
    proposal = proposal_of(request)
    kind = result["meta"].get("error_type")
    if result["meta"].get("origin") == LOOP_ORIGIN and kind in ("recall", "repeat"):
        proposal["gate"] = kind
    return policy.classify(step, proposal, result, None, settings)


def with_update(result: ToolAnswer, call_id: str | None, update: dict[str, Any]) -> ToolAnswer:
    """The handler's answer with ``update`` written beside it (into its Command, when an
    inner middleware answered with one; as a Command of its own after a tool's list; the
    fields are this middleware's own)."""
    if isinstance(result, ToolMessage):
        return Command(update={"messages": [result], **update})
    if isinstance(result, list):
        return [*result, Command(update=update)] if tool_message(result, call_id) else result
    if isinstance(result.update, dict) and not result.goto and tool_message(result, call_id):
        return Command(update={**result.update, **update}, graph=result.graph)
    return result  # an answer tether cannot read: passed on as it is


JSON_STARTS = frozenset('{["-0123456789tfnNI')
"""The characters a JSON text may start with (after whitespace), as :func:`json.loads`
reads it: any other start is not JSON."""


def _data(text: str) -> Any:
    """The tool's text as JSON, else as it is. A text that cannot be JSON is not parsed: a
    failed parse raises an error whose message costs more than the rest of the reading."""
    start = text.lstrip(" \t\n\r")[:1]
    if start not in JSON_STARTS:
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text
