"""The agent's state: the task, both memory buffers, every counter and the outcome.

This is a leaf module (it imports only :mod:`tether.vocabulary`), so any part of the package
can use its types. Everything the loop decides from is here, and every value is plain JSON-safe
data, so a saved run is a complete, resumable picture of it. What is only worth watching
(the trace) is streamed, not stored: see :class:`TraceEvent`.

Statuses, stop causes and failure kinds are listed once, in :mod:`tether.vocabulary`.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from typing import Annotated, Any, Literal, NotRequired

from langgraph.channels import DeltaChannel
from typing_extensions import TypedDict

from tether.vocabulary import Gate, NextMove, Status, StepKind, StopCause, TraceEventName

# --- records ----------------------------------------------------------------------------------


class Usage(TypedDict):
    """Tokens as the server reported them (or as counted, when it did not)."""

    input_tokens: int
    output_tokens: int
    total_tokens: int


ZERO_USAGE: Usage = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}


class Proposal(TypedDict):
    """What the model's latest reply asked for."""

    kind: Literal["action", "final", "invalid"]
    thought: str
    tool: NotRequired[str]
    arguments: NotRequired[dict[str, Any]]
    answer: NotRequired[str]
    error: NotRequired[str]  # why an invalid reply could not be used
    fingerprint: NotRequired[str]  # tool + canonical arguments, for repeat checks
    gate: NotRequired[Gate]  # set by the loop for actions, never by the model
    gate_reason: NotRequired[str]  # for approve: the setting or mark that asks; for refuse: why
    registered: NotRequired[bool]  # set by the loop: ``tool`` names a registered tool
    check: NotRequired[str]  # set by the loop: the note a final answer is sent back with
    unbacked: NotRequired[bool]  # set by the loop: the profile found it states nothing found
    raw: NotRequired[str]  # the reply as received; not kept in state
    repairs: NotRequired[list[str]]  # how a reply off the format was read ("bare_value", ...)


class ToolResult(TypedDict):
    """A tool call's outcome as the loop records it. Only tether's code builds these: what a
    tool returns is always ``data``, never a result of its own choosing."""

    status: Literal["success", "error"]
    data: NotRequired[Any]
    message: NotRequired[str]
    meta: dict[str, Any]  # error_type, transient, latency_s, retry_count, confidence_score...


class RuleVerdict(TypedDict):
    """A rule's judgement of a result, recorded by the loop beside (never inside) the result."""

    action: Literal["retry", "switch", "stop"]
    reason: str
    status: NotRequired[Status]  # for stop
    rule: str  # the rule's name


class Verdict(TypedDict):
    """A decision to end the run."""

    status: Status
    cause: StopCause  # what ended it (the cap's note, the console and the benchmark key on it)
    reason: str
    cap: NotRequired[bool]  # a cap (steps, budget, breaker): one last call asks for an answer


class StepRecord(TypedDict):
    """How one step ended, as the loop's counters see it."""

    step: int
    kind: StepKind
    summary: str
    fingerprint: str | None
    tool: NotRequired[str]  # a registered tool's name (never an unknown name the model wrote)
    cues: NotRequired[list[str]]  # words of its error a note may quote (decisions.notes)
    unbacked: NotRequired[bool]  # a final answer stating nothing found (the profile's word)


class ReasoningEntry(TypedDict):
    """What the model thought and chose at one step."""

    step: int
    thought: str
    action: str | None
    action_input: dict[str, Any] | None
    tokens: int  # counted once, when the entry is made


class ToolResultEntry(TypedDict):
    """What one tool call returned, as the prompt will show it."""

    step: int
    tool: str
    arguments: dict[str, Any]
    result: ToolResult
    tokens: int  # counted once, when the entry is made


class Turn(TypedDict):
    """One message of a thread's conversation: the user's, or the reply tether gave it."""

    role: Literal["user", "tether"]
    text: str
    tokens: int  # its line in the prompt, counted once, when the turn is recorded


class TraceEvent(TypedDict):
    """One thing that happened, streamed as it happens (``stream_mode="custom"``).

    ``event`` is a :data:`TraceEventName` (its members are documented there). A trace read
    back from a run store may come from an older tether: readers must expect other names.
    """

    step: int
    event: TraceEventName
    detail: dict[str, Any]


class CallRecord(TypedDict):
    """One distinct call (tool + arguments) over the run, for the refuse and repeat gates."""

    runs: int  # times it was run (retries of one attempt not counted)
    outcomes: list[str]  # step kinds of its last two outcomes, refusals and repeats aside
    step: NotRequired[int]  # the step of its latest success
    known: NotRequired[list[str]]  # what that success returned, as a note may quote it
    noted: NotRequired[int]  # notes sent about proposing it again


class CallEvent(TypedDict):
    """An update to :class:`CallRecord`: the call ran, or one of its steps closed."""

    key: str
    ran: NotRequired[bool]
    outcome: NotRequired[str]
    step: NotRequired[int]
    known: NotRequired[list[str]]
    noted: NotRequired[bool]


CALLS_KEPT = 16
"""Distinct calls remembered (the most recent kept), so the state stays bounded."""
TURNS_KEPT = 40
"""Messages of a thread's conversation kept (the most recent), so the state stays bounded."""
HISTORY_KEPT = 4
"""Step records kept at least (the breaker and the switch may ask for more)."""


@functools.lru_cache(maxsize=256)  # a call's key is asked for as it is gated and recorded
def call_key(fingerprint: str) -> str:
    """A short, stable key for a call's fingerprint (which may be long)."""
    return hashlib.sha1(fingerprint.encode("utf-8", "surrogatepass")).hexdigest()[:16]


# --- reducers ---------------------------------------------------------------------------------
# The buffers, the step records and the call memory are delta channels: a checkpoint stores
# only the step's new entry (the node's write), not the whole list again, and LangGraph
# rebuilds the value on load by folding the writes since the last snapshot. So each reducer
# below has a per-update form and a batch form that folds it (the batch form is what a delta
# channel calls, and folding is what makes replaying writes in any batching give one value).


class WindowedAppend(TypedDict):
    """An update that appends ``append`` and keeps the last ``window`` entries."""

    append: list[Any]
    window: int


def windowed(items: list[Any], window: int) -> WindowedAppend:
    return {"append": items, "window": window}


def keep_window(current: list[Any] | None, update: WindowedAppend | list[Any]) -> list[Any]:
    """Reducer for the buffers: a list replaces the buffer; a WindowedAppend appends and trims,
    so no node can forget to keep the window."""
    if isinstance(update, list):
        return list(update)
    merged = [*(current or []), *update["append"]]
    return merged[-update["window"] :]


def keep_windows(current: list[Any], updates: Sequence[WindowedAppend | list[Any]]) -> list[Any]:
    """Batch form of :func:`keep_window`."""
    return functools.reduce(keep_window, updates, current)


def add_usage(current: Usage | None, spent: Usage) -> Usage:
    """Reducer: usage accumulates over the run (and over a resumed run)."""
    base = current or ZERO_USAGE
    return {
        "input_tokens": base["input_tokens"] + spent["input_tokens"],
        "output_tokens": base["output_tokens"] + spent["output_tokens"],
        "total_tokens": base["total_tokens"] + spent["total_tokens"],
    }


def record_calls(
    current: dict[str, CallRecord] | None, events: list[CallEvent]
) -> dict[str, CallRecord]:
    """Reducer for ``calls``: count runs, keep the last two outcomes, forget the oldest
    calls past :data:`CALLS_KEPT` (after each event, so any batching of events agrees)."""
    calls = dict(current or {})
    for event in events:
        old = calls.pop(event["key"], {"runs": 0, "outcomes": []})
        record: CallRecord = {"runs": old["runs"], "outcomes": list(old["outcomes"])}
        if event.get("ran"):
            record["runs"] += 1
        record.update({k: old[k] for k in ("step", "known", "noted") if k in old})  # type: ignore[typeddict-item]
        if "outcome" in event:
            record["outcomes"] = [*record["outcomes"], event["outcome"]][-2:]
        if "known" in event:  # a new success: the notes about proposing it again start over
            record |= {"step": event.get("step", 0), "known": list(event["known"]), "noted": 0}
        if event.get("noted"):
            record["noted"] = record.get("noted", 0) + 1
        calls[event["key"]] = record  # re-inserted: the most recent go last
        while len(calls) > CALLS_KEPT:
            del calls[next(iter(calls))]
    return calls


def record_call_batches(
    current: dict[str, CallRecord], batches: Sequence[list[CallEvent]]
) -> dict[str, CallRecord]:
    """Batch form of :func:`record_calls`."""
    return record_calls(current, [event for batch in batches for event in batch])


# --- the graph's schemas ----------------------------------------------------------------------


class InputState(TypedDict):
    """What a caller passes to start a run."""

    task: str


class AgentState(TypedDict, total=False):
    """The whole state of one run, as checkpointed after every node."""

    # --- input and identity ---------------------------------------------------------------
    task: str
    """The user's task, stripped."""
    run_id: str
    """Stable across resume; tools derive idempotency keys from it."""

    # --- memory -------------------------------------------------------------------------
    reasoning_buffer: Annotated[list[ReasoningEntry], DeltaChannel(keep_windows)]
    """The last ``reasoning_window`` thoughts and actions."""
    tool_buffer: Annotated[list[ToolResultEntry], DeltaChannel(keep_windows)]
    """The last ``tool_window`` tool results."""
    conversation: Annotated[list[Turn], DeltaChannel(keep_windows)]
    """The thread's last ``TURNS_KEPT`` messages, oldest first: the user's (the task last) and
    tether's reply to each earlier one; the prompt shows them before the task, untrusted."""

    # --- counters -----------------------------------------------------------------------
    steps: int
    """Model calls made (the step cap counts these)."""
    success_streak: int
    """Consecutive successful tool steps (lowers the temperature)."""
    failure_streak: int
    """Consecutive failed steps (the strategy switch and the circuit breaker read it)."""
    parse_failures: int
    """Replies that could not be read, over the run."""
    call_attempt: int
    """Attempts of the call in flight (retries of a transient failure included)."""
    tool_retries: int
    """Retries over the run."""
    tool_failures: dict[str, int]
    """Failed calls of each registered tool over the run (a stop rule may read it)."""
    usage: Annotated[Usage, add_usage]
    """Tokens spent over the run; nodes write deltas."""
    next_temperature: float
    """Sampling temperature for the next model call."""
    hints: list[str]
    """Controller notes for the next prompt. Written by tether only, never from tool text."""
    calls: Annotated[dict[str, CallRecord], DeltaChannel(record_call_batches)]
    """Each distinct call's runs and last outcomes, for the refuse and repeat gates."""
    history: Annotated[list[StepRecord], DeltaChannel(keep_windows)]
    """The last steps' records: as many as the breaker and the switch need, at least
    ``HISTORY_KEPT``. The trace has every step."""

    # --- the step in flight -------------------------------------------------------------
    next: NextMove
    """Where the graph goes after the node that wrote it (see :data:`NextMove`)."""
    proposal: Proposal | None
    """The latest reply, parsed; ``gate`` says what the loop does with an action."""
    result: ToolResult | None
    """The result of the call in flight (or of its refusal or rejection)."""
    rule: RuleVerdict | None
    """A rule's judgement of ``result``."""
    unresolved: Proposal | None
    """A side-effecting call whose outcome is unknown (it failed transiently: a payment may
    have been taken before the timeout). The run does not end before a replay of it."""
    resolving: bool
    """The loop is replaying ``unresolved`` itself before it lets the run end."""
    closing: Verdict | None
    """A cap was reached: one last model call (no tools) asks for an answer, then this ends it."""
    sent_back: bool
    """A final answer was sent back once by the check; the next one is taken as written."""
    grounds: dict[str, Any]
    """What the run's tool calls established, for that check (decisions.grounding.Grounds)."""

    # --- outcome ------------------------------------------------------------------------
    status: Status
    cause: StopCause | None
    """What ended the run (:data:`StopCause`); the status says how it ended."""
    reason: str
    answer: str | None


class RouteView(TypedDict, total=False):
    """The part of :class:`AgentState` the conditional edges read: the move the last node
    recorded. LangGraph reads an edge only the keys its input type names, so edges typed with
    this read one channel a step instead of the whole state."""

    next: NextMove
