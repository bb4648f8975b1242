"""Acting on a stop before a model call, inside the call's wrapper (no graph node of its own).

A stop that allows a last answer (a cap, with ``cap_answer``) closes the request: one more
model call with no tools and a note asking for the best answer from what is known, after
which the run ends with the cap's status. Any other stop replaces the call: the model is
not called, and tether's stop message ends the run (a reply with no tool calls, so the agent
ends as it does on an answer).

The outermost tether wrapper that finds a stop acts on it; the wrappers inside see the
request closed (and pass it on), or are never called. A stop while a write's outcome is
unknown (the repeat guard's record) comes after the write is replayed with the same
arguments, once, in place of the call, as in the loop; a stop that still leaves it unknown
says so in its reason, and takes no answer at a cap.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, cast

from langchain.agents.middleware.types import ExtendedModelResponse, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, HumanMessage, ToolCall
from langgraph.types import Command
from tether.decisions import notes, side_effects
from tether.settings import AgentSettings
from tether.state import Proposal, Verdict

from langchain_tether.common import (
    CAP_NOTE,
    CLOSING,
    NOTE_ID,
    STOP_ID,
    ending,
    responded,
    stop_message,
)


def is_closed(request: ModelRequest[Any]) -> bool:
    """The request already asks for the last answer."""
    return any(message.id == CAP_NOTE for message in request.messages)


def closing_of(request: ModelRequest[Any]) -> Verdict | None:
    """The cap an outer wrapper closed the request for."""
    state: Any = request.state
    return state.get(CLOSING)


def closed(request: ModelRequest[Any], verdict: Verdict) -> ModelRequest[Any]:
    """The last answer's request: no tools, the cap's note last, and the cap in the state the
    wrappers inside see."""
    note = HumanMessage(notes.cap_note(verdict["cause"]), id=CAP_NOTE)
    state: dict[str, Any] = {**request.state, CLOSING: verdict}
    return request.override(
        tools=[], tool_choice=None, messages=[*request.messages, note], state=cast(Any, state)
    )


def answered(
    response: ModelResponse[Any], verdict: Verdict, unresolved: Proposal | None = None
) -> tuple[ModelResponse[Any], dict[str, Any]]:
    """The last answer as the run's final message (any tool call it still makes is dropped:
    the run ends here), and the status and reason it ends with. A stop message means the
    call was not made (a wrapper inside found no room for it): its ending stands. While a
    write's outcome is still ``unresolved``, the answer is not taken (it cannot know it)."""
    messages = list(response.result)
    replies = [i for i, m in enumerate(messages) if isinstance(m, AIMessage)]
    reply = cast(AIMessage, messages[replies[-1]]) if replies else None
    if reply is not None and str(reply.id or "").startswith(STOP_ID):
        return response, {}
    answer = reply.text.strip() if reply is not None else ""
    if reply is not None:
        kwargs = {k: v for k, v in reply.additional_kwargs.items() if k != "tool_calls"}
        plain = reply.model_copy(
            update={"tool_calls": [], "invalid_tool_calls": [], "additional_kwargs": kwargs}
        )
        status = verdict["status"]
        taken = answer and unresolved is None
        messages[replies[-1]] = ending(plain, status) if taken else stop_message(status)
    got = "an answer was asked for at the cap" if answer else "asked at the cap for an answer"
    reason = f"{verdict['reason']}; {got}" + ("" if answer else ", the reply gave none")
    reason += side_effects.unknown_outcome_note(unresolved)
    update = {
        "tether_status": verdict["status"],
        "tether_cause": verdict["cause"],
        "tether_reason": reason,
    }
    return ModelResponse(result=messages, structured_response=response.structured_response), update


def stopped(
    verdict: Verdict,
    update: dict[str, Any],
    *,
    unasked: bool = False,
    unresolved: Proposal | None = None,
) -> ExtendedModelResponse[Any]:
    """The model is not called: the run ends on ``verdict`` with tether's stop message.
    ``unasked``: at a cap whose last answer's call does not fit either. ``update``: the
    wrapper's own (a new run's fields). ``unresolved``: a write whose outcome is unknown."""
    reason = verdict["reason"] + ("; no room left to ask for an answer" if unasked else "")
    reason += side_effects.unknown_outcome_note(unresolved)
    ends = {
        "tether_status": verdict["status"],
        "tether_cause": verdict["cause"],
        "tether_reason": reason,
    }
    return ExtendedModelResponse(
        model_response=ModelResponse(result=[stop_message(verdict["status"])]),
        command=Command(update={**update, **ends}),
    )


def replay_call(unresolved: Proposal) -> AIMessage:
    """The call that settles a write of unknown outcome: the same tool and arguments."""
    key = uuid.uuid4().hex
    call: ToolCall = {
        "name": unresolved.get("tool", ""),
        "args": dict(unresolved.get("arguments", {})),
        "id": f"tether-replay-{key}",
        "type": "tool_call",
    }
    return AIMessage("", tool_calls=[call], id=f"{NOTE_ID}replay-{key}")


@dataclass
class Plan:
    """A model call about to be made: the request to send, or the stop that replaces the call
    (``stop``); ``closing``, the cap whose last answer this wrapper asked for."""

    request: ModelRequest[Any]
    stop: Verdict | None = None
    closing: Verdict | None = None
    unasked: bool = False

    def stopped(self, update: dict[str, Any]) -> ExtendedModelResponse[Any] | None:
        """The reply that replaces the call, if it is not made: before a stop (or the last
        answer's call) while a write's outcome is unknown, that write's replay, once
        (:func:`tether.decisions.side_effects.must_resolve_first`); else the stop."""
        verdict = self.stop or self.closing
        if verdict is None:
            return None
        state: Any = self.request.state
        unresolved, resolving = self.unresolved(), bool(state.get("tether_resolving"))
        if side_effects.must_resolve_first(verdict, unresolved, resolving):
            assert unresolved is not None
            replay = ModelResponse(result=[replay_call(unresolved)])
            command: Command[Any] = Command(update={**update, "tether_resolving": True})
            return ExtendedModelResponse(model_response=replay, command=command)
        if self.stop is None:
            return None
        return stopped(self.stop, update, unasked=self.unasked, unresolved=unresolved)

    def finish(
        self, response: ModelResponse[Any], update: dict[str, Any]
    ) -> ExtendedModelResponse[Any] | ModelResponse[Any]:
        """The response with this wrapper's update (and the cap's ending, if it closed)."""
        if self.closing is not None:
            response, ends = answered(response, self.closing, self.unresolved())
            update = {**update, **ends}
        return responded(response, update)

    def unresolved(self) -> Proposal | None:
        """The write whose outcome is unknown, as the repeat guard recorded it (None when
        there is none, or no repeat guard)."""
        state: Any = self.request.state
        return state.get("tether_unresolved")


def plan_call(request: ModelRequest[Any], verdict: Verdict | None, settings: AgentSettings) -> Plan:
    """What a wrapper does with a stop it found before the call: at a cap, with
    ``cap_answer``, close the request (the last answer); else replace the call. A request an
    outer wrapper closed already goes on as it is."""
    if verdict is None or is_closed(request):
        return Plan(request)
    if verdict.get("cap") and settings.cap_answer:
        return Plan(closed(request, verdict), closing=verdict)
    return Plan(request, stop=verdict)
