"""What tether's middleware share: the state they keep (checkpointed, so a resumed run still
has it), how a run starts (lazily: a run's first model call reads the fields blank and
writes them blank, so no hook adds a graph node), the stop rules' facts, and a run's end.
Control facts live in these private fields and in :mod:`langchain_tether.calls`, never in
a message's id, name, metadata or text, which a model server or a tool may set."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, NotRequired, TypedDict, cast, get_origin, get_type_hints

import tether.decisions as decisions
from langchain.agents.middleware import types as lc
from langchain_core.messages import HumanMessage
from langgraph.types import Command, Overwrite
from tether.decisions import CallRecord, Proposal, StepRecord, StopFacts, Usage, Verdict

from langchain_tether.calls import ModelCall

NOTE_ID = "tether-note-"
"""Ids of the messages tether adds to a model request, so a reader of the run can tell them
(:func:`langchain_tether.answer_of`); nothing tether decides reads them."""
Request = lc.ModelRequest[Any]
Response = lc.ModelResponse[Any]
ModelResult = Response | lc.ExtendedModelResponse[Any]
Outcome = tuple[Response, dict[str, Any]]
"""A model call as a tether wrapper ends it: the response and the state update beside it
(:func:`extended` makes the hook's return of it)."""
ENDS = ("tether_status", "tether_cause", "tether_reason")
"""The fields a run's end writes (:func:`ending`)."""


def latest(current: Any, new: Any) -> Any:
    """Reducer: the newest value (several middleware write the same value in one step)."""
    return new


def first_verdict(current: Verdict | None, new: Verdict | None) -> Verdict | None:
    """Reducer for a pending stop: the first verdict holds (parallel tool calls may each
    bring one); None clears it."""
    return current if current is not None and new is not None else new


def add_failures(current: dict[str, int] | None, new: Any) -> dict[str, int]:
    """Reducer: failed calls per registered tool, ``new`` a tool's name (one more failure)
    or an ``Overwrite`` of them all."""
    if isinstance(new, dict):
        return dict(new)
    counts = dict(current or {})
    counts[new] = counts.get(new, 0) + 1
    return counts


def appended(current: list[Any] | None, new: list[Any]) -> list[Any]:
    """Reducer: the items of ``new`` after the current ones."""
    return [*(current or []), *new]


class RunFields(TypedDict, total=False):
    """tether's private fields, in one channel of the agent's state (:data:`PRIVATE`; hooks
    read them with :func:`fields` and write them with :func:`packed`). LangGraph reads and
    copies every channel at each graph step: a channel for each field cost 4% of a run (3.5 M
    instructions in 9 steps; benchmarks/middleware_overhead.py --instructions). A
    field takes a write by the reducer it is annotated with, else as the newest value."""

    tether_step: int
    """Model calls made in this run (the loop's steps)."""
    tether_stop: Annotated[Verdict | None, first_verdict]
    """A stop decided while the tools ran, acted on at the next model call."""
    tether_usage: Usage | None
    """Tokens this run spent (the budget's count)."""
    tether_history: Annotated[list[StepRecord], decisions.keep_window]
    """The run's last tool steps, as the stop rules and the failure note read them."""
    tether_tool_failures: Annotated[dict[str, int], add_failures]
    """Failed calls of each registered tool in this run."""
    tether_calls: Annotated[dict[str, CallRecord], decisions.record_calls]
    """Each distinct call of the thread: runs, last outcomes, what a success returned."""
    tether_unresolved: Proposal | None
    """A write whose outcome is unknown (it failed transiently)."""
    tether_resolving: bool
    """The run replayed that write itself, before an answer (once per run)."""
    tether_run_id: str
    """The run's id, as the loop gives its tools (idempotency keys derive from it)."""
    tether_task: str
    """The run's task: the user's message that started it."""
    tether_grounds: dict[str, Any]
    """What the thread's tool calls established (:class:`tether.decisions.grounding.Grounds`)."""
    tether_unfolded: Annotated[list[list[Any]], appended]
    """Tool calls (task, tool, arguments, result) the next model call folds into the grounds,
    once: LangGraph applies a reducer twice a step, and a fold in it cost 0.2 M instructions a
    step more (2% of a step; benchmarks/middleware_overhead.py --instructions)."""
    tether_sent_back: bool
    """An answer was sent back in this run; the next is taken as written."""


PRIVATE = "tether_private"
HINTS = get_type_hints(RunFields, include_extras=True)
REDUCERS: dict[str, Callable[[Any, Any], Any]] = {
    key: hint.__metadata__[0] for key, hint in HINTS.items() if get_origin(hint) is Annotated
}


def merge_fields(current: RunFields | None, new: Mapping[str, Any]) -> RunFields:
    """Reducer of the private channel: each field takes a write by its reducer (or Overwrite)."""
    merged: Any = dict(current or {})
    for key, value in new.items():
        take = REDUCERS.get(key, latest)
        merged[key] = value.value if isinstance(value, Overwrite) else take(merged.get(key), value)
    return cast(RunFields, merged)


class RunState(lc.AgentState[lc.ResponseT]):
    """The fields every tether middleware shares."""

    tether_status: NotRequired[Annotated[str | None, lc.OmitFromInput, latest]]
    """Set when tether ended the run: a status of :data:`tether.STATUSES`."""
    tether_cause: NotRequired[Annotated[str | None, lc.OmitFromInput, latest]]
    """What ended it: a :data:`tether.StopCause`."""
    tether_reason: NotRequired[Annotated[str | None, lc.OmitFromInput, latest]]
    """Why, in tether's words (numbers and the names of the calls involved)."""
    tether_private: NotRequired[Annotated[RunFields, lc.PrivateStateAttr, merge_fields]]
    """tether's private fields (:class:`RunFields`)."""


def fields(state: Any) -> Any:
    """The state with the private fields read as its own keys."""
    return {**state, **(state.get(PRIVATE) or {})}


def packed(update: Mapping[str, Any]) -> dict[str, Any]:
    """A hook's update as the state takes it: the private fields in their channel."""
    private = {key: value for key, value in update.items() if key in RunFields.__annotations__}
    if not private:
        return dict(update)
    kept = {key: value for key, value in update.items() if key not in private}
    return {**kept, PRIVATE: {**kept.get(PRIVATE, {}), **private}}


RUN: dict[str, Any] = {**dict.fromkeys(ENDS), "tether_step": 0, "tether_stop": None}
"""The shared fields at the start of a run."""


def starts_run(state: Mapping[str, Any]) -> bool:
    """This model call is a run's first: the conversation ends with the user's message (not a
    summary SummarizationMiddleware wrote). Within a run a model call follows tool results,
    or a resume that continues the run."""
    messages = state.get("messages") or []
    last = messages[-1] if messages else None
    return (
        isinstance(last, HumanMessage)
        and last.additional_kwargs.get("lc_source") != "summarization"
    )


def run_view(state: Any, fresh: Callable[[Any], Mapping[str, Any]]) -> tuple[Any, dict[str, Any]]:
    """The state as this run sees it, and the update that starts the run: at a run's first
    model call, ``fresh(state)`` (the middleware's own fields as a run starts, an
    ``Overwrite`` for a field with a reducer) and the shared fields replace what the last
    run left."""
    state = fields(state)
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


# --- the stop rules' facts --------------------------------------------------------------------


def facts_of(view: Any, also: list[StepRecord] = ()) -> StopFacts:  # type: ignore[assignment]
    """The stop rules' facts from the run's private fields (``also``: records of a call now
    ending, not in the state yet)."""
    records = [*(view.get("tether_history") or []), *also]
    failures = view.get("tether_tool_failures")
    return StopFacts.of_calls(step_of(view), records, view.get("tether_usage"), failures)


# --- ending a run -----------------------------------------------------------------------------


def ending(verdict: Verdict, reason: str | None = None) -> dict[str, Any]:
    """The update that ends the run on ``verdict``."""
    text = verdict["reason"] if reason is None else reason
    return dict(zip(ENDS, (verdict["status"], verdict["cause"], text), strict=True))


def responded(response: Response, update: dict[str, Any], call: ModelCall) -> Outcome:
    """The response with a wrapper's update. When a wrapper inside ended the run (the call's
    record says so), the blank status a new run starts with is not written over it."""
    if call.ended:
        update = {k: v for k, v in update.items() if k not in ENDS}
    return response, update


def extended(outcome: Outcome) -> ModelResult:
    """A model hook's return: the response, with the update as its command (if any)."""
    response, update = outcome
    if not update:
        return response
    return lc.ExtendedModelResponse(model_response=response, command=Command(update=packed(update)))
