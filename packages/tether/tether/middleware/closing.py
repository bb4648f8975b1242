"""The last answer at a cap: one more model call with no tools and a note asking for the best
answer from what is known (``cap_answer``), after which the run ends with the cap's status.

Any tether middleware that sees a closing verdict in the state and a request not yet closed
closes it (the outermost one does it; the others then pass the call on), so the note is sent
once however many of them are installed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from langchain.agents.middleware.types import ExtendedModelResponse, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.types import Command

from tether.decisions import notes
from tether.middleware.common import CAP_NOTE, STOP_ID, stop_message
from tether.state import Verdict

Finish = Callable[[ModelResponse[Any]], ExtendedModelResponse[Any]]


def is_closed(request: ModelRequest[Any]) -> bool:
    """The request already asks for the last answer."""
    return any(message.id == CAP_NOTE for message in request.messages)


def closed(request: ModelRequest[Any], verdict: Verdict) -> ModelRequest[Any]:
    """The last answer's request: no tools, and the cap's note last."""
    note = HumanMessage(notes.cap_note(verdict["status"]), id=CAP_NOTE)
    return request.override(tools=[], tool_choice=None, messages=[*request.messages, note])


def answered(
    response: ModelResponse[Any], verdict: Verdict
) -> tuple[ModelResponse[Any], dict[str, Any]]:
    """The last answer as the run's final message (any tool call it still makes is dropped:
    the run ends here), and the status and reason it ends with. A stop message means the
    call was not made (a wrapper inside found no room for it): its ending stands."""
    messages = list(response.result)
    replies = [i for i, m in enumerate(messages) if isinstance(m, AIMessage)]
    reply = messages[replies[-1]] if replies else None
    if reply is not None and str(reply.id or "").startswith(STOP_ID):
        return response, {}
    answer = reply.text.strip() if reply is not None else ""
    if reply is not None:
        kwargs = {k: v for k, v in reply.additional_kwargs.items() if k != "tool_calls"}
        plain = reply.model_copy(
            update={"tool_calls": [], "invalid_tool_calls": [], "additional_kwargs": kwargs}
        )
        messages[replies[-1]] = plain if answer else stop_message(verdict["status"])
    got = "an answer was asked for at the cap" if answer else "asked at the cap for an answer"
    reason = f"{verdict['reason']}; {got}" + ("" if answer else ", the reply gave none")
    update = {"tether_status": verdict["status"], "tether_reason": reason, "tether_closing": None}
    return ModelResponse(result=messages, structured_response=response.structured_response), update


def stopped(verdict: Verdict, *, unasked: bool = False) -> ExtendedModelResponse[Any]:
    """The model is not called: the run ends on ``verdict`` with tether's stop message.
    ``unasked``: at a cap whose last answer's call does not fit either."""
    reason = verdict["reason"] + ("; no room left to ask for an answer" if unasked else "")
    update = {"tether_status": verdict["status"], "tether_reason": reason, "tether_closing": None}
    return ExtendedModelResponse(
        model_response=ModelResponse(result=[stop_message(verdict["status"])]),
        command=Command(update=update),
    )


@dataclass
class Plan:
    """A model call about to be made: the request to send, or the reply that replaces the
    call (``reply``); ``closing``, the cap whose last answer this wrapper asked for."""

    request: ModelRequest[Any]
    reply: ExtendedModelResponse[Any] | None = None
    closing: Verdict | None = None
    update: dict[str, Any] = field(default_factory=dict)

    def finish(
        self, response: ModelResponse[Any], update: dict[str, Any]
    ) -> ExtendedModelResponse[Any]:
        """The response with this wrapper's update (and the cap's ending, if it closed)."""
        if self.closing is not None:
            response, ending = answered(response, self.closing)
            update = {**update, **ending}
        return ExtendedModelResponse(
            model_response=response, command=Command(update={**self.update, **update})
        )


def close_if_asked(request: ModelRequest[Any]) -> Plan:
    """The plan for a request whose state holds a closing verdict no wrapper has acted on
    yet: close it (and end the run when its answer arrives); else send it as it is."""
    state: Any = request.state
    closing: Verdict | None = state.get("tether_closing")
    if closing is None or is_closed(request):
        return Plan(request)
    return Plan(closed(request, closing), closing=closing)
