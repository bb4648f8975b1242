"""Acting on a stop before a model call, inside the call's wrapper. A cap (with
``cap_answer``) closes the request: one more call with no tools and the cap's note
(:func:`tether.decisions.cap_note`), then the run ends with the cap's status. Any other stop
replaces the call with tether's stop message (a reply with no tool calls, so the agent ends
as on an answer). The outermost tether wrapper that finds a stop acts on it. While a write's
outcome is unknown, it is replayed with the same arguments first, once, as in the loop; a
stop that still leaves it unknown says so, and takes no answer at a cap."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import tether.decisions as decisions
from langchain.agents.middleware.types import ModelResponse
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.messages.tool import tool_call
from tether import STATUSES, AgentSettings
from tether.decisions import Proposal, Verdict

from langchain_tether.calls import ModelCall
from langchain_tether.common import NOTE_ID, Outcome, Request, Response, ending, fields, responded

STOP_ID = f"{NOTE_ID}stop-"
"""Ids of the run's last message when tether ends it without an answer (for readers)."""


def closed(request: Request, verdict: Verdict, call: ModelCall) -> Request:
    """The last answer's request: no tools and the cap's note last; the call's record says
    which cap closed it, for the wrappers inside."""
    call.closing = verdict
    note = HumanMessage(decisions.cap_note(verdict["cause"]), id=f"{NOTE_ID}cap")
    return request.override(tools=[], tool_choice=None, messages=[*request.messages, note])


def stop_message(status: str) -> AIMessage:
    """The run's last message when tether ends it without an answer: tether's words only (the
    reason, which may name a tool's error, stays in ``tether_reason``)."""
    info = STATUSES.get(status)
    meaning = info.meaning if info else "stopped"
    return AIMessage(f"The run ended ({status}): {meaning}.", id=f"{STOP_ID}{uuid.uuid4()}")


def answered(
    response: Response, verdict: Verdict, call: ModelCall, unresolved: Proposal | None
) -> tuple[Response, dict[str, Any]]:
    """The last answer as the run's final message (any tool call it still makes is dropped:
    the run ends here), and the status and reason it ends with. While a write's outcome is
    still ``unresolved``, the answer is not taken (it cannot know it)."""
    messages = list(response.result)
    replies = [i for i, m in enumerate(messages) if isinstance(m, AIMessage)]
    reply = messages[replies[-1]] if replies else None
    answer = reply.text.strip() if isinstance(reply, AIMessage) else ""
    taken = bool(answer) and unresolved is None
    if isinstance(reply, AIMessage):
        kwargs = {k: v for k, v in reply.additional_kwargs.items() if k != "tool_calls"}
        plain = reply.model_copy(
            update={"tool_calls": [], "invalid_tool_calls": [], "additional_kwargs": kwargs}
        )
        messages[replies[-1]] = plain if taken else stop_message(verdict["status"])
    else:
        messages.append(stop_message(verdict["status"]))
    reason = decisions.cap_ending(verdict["reason"], answer)
    reason += decisions.unknown_outcome_note(unresolved)
    call.ended = True
    result = ModelResponse(result=messages, structured_response=response.structured_response)
    return result, ending(verdict, reason)


def stopped(
    verdict: Verdict,
    update: dict[str, Any],
    call: ModelCall,
    *,
    unasked: bool = False,
    unresolved: Proposal | None = None,
) -> Outcome:
    """The model is not called: the run ends on ``verdict`` with tether's stop message.
    ``unasked``: at a cap whose last answer's call does not fit either."""
    reason = verdict["reason"] + ("; no room left to ask for an answer" if unasked else "")
    reason += decisions.unknown_outcome_note(unresolved)
    call.answered = call.ended = True
    return ModelResponse([stop_message(verdict["status"])]), {**update, **ending(verdict, reason)}


def replay_call(unresolved: Proposal) -> AIMessage:
    """The call that settles a write of unknown outcome: the same tool and arguments."""
    key, arguments = uuid.uuid4().hex, dict(unresolved.get("arguments", {}))
    call = tool_call(name=unresolved.get("tool", ""), args=arguments, id=f"tether-replay-{key}")
    return AIMessage("", tool_calls=[call], id=f"{NOTE_ID}replay-{key}")


@dataclass
class Plan:
    """A model call about to be made: the request to send, or the stop that replaces the call
    (``stop``); ``closing``, the cap whose last answer this wrapper asked for; ``capped``, the
    budget's stop if the reply, capped at what the budget has left, calls a tool."""

    request: Request
    call: ModelCall
    stop: Verdict | None = None
    closing: Verdict | None = None
    unasked: bool = False
    capped: Verdict | None = None

    def stopped(self, update: dict[str, Any]) -> Outcome | None:
        """The reply that replaces the call, if it is not made: before a stop (or the last
        answer's call) while a write's outcome is unknown, that write's replay, once
        (:func:`tether.decisions.must_resolve_first`); else the stop."""
        verdict = self.stop or self.closing
        if verdict is None:
            return None
        state: Any = fields(self.request.state)
        unresolved, resolving = self.unresolved(), bool(state.get("tether_resolving"))
        if decisions.must_resolve_first(verdict, unresolved, resolving):
            assert unresolved is not None
            self.call.answered = True
            self.call.closing = None
            return ModelResponse([replay_call(unresolved)]), {**update, "tether_resolving": True}
        if self.stop is None:
            return None
        return stopped(self.stop, update, self.call, unasked=self.unasked, unresolved=unresolved)

    def finish(self, response: Response, update: dict[str, Any]) -> Outcome:
        """The response with this wrapper's update (and the cap's ending, if it closed; the
        budget's stop in its place, if its reply, capped at what was left, calls a tool)."""
        if self.closing is not None and not self.call.ended:
            response, ends = answered(response, self.closing, self.call, self.unresolved())
            return response, {**update, **ends}
        reply = response.result[-1] if response.result else None
        if self.capped is not None and isinstance(reply, AIMessage) and reply.tool_calls:
            return stopped(
                self.capped, update, self.call, unasked=True, unresolved=self.unresolved()
            )
        return responded(response, update, self.call)

    def unresolved(self) -> Proposal | None:
        """The write whose outcome is unknown, as the repeat guard recorded it."""
        return fields(self.request.state).get("tether_unresolved")  # type: ignore[no-any-return]


def plan_call(
    request: Request, verdict: Verdict | None, settings: AgentSettings, call: ModelCall
) -> Plan:
    """What a wrapper does with a stop it found before the call: at a cap, with
    ``cap_answer``, close the request (the last answer); else replace the call. A call an
    outer wrapper closed already goes on as it is."""
    if verdict is None or call.closing is not None:
        return Plan(request, call)
    if verdict.get("cap") and settings.cap_answer:
        return Plan(closed(request, verdict, call), call, closing=verdict)
    return Plan(request, call, stop=verdict)
