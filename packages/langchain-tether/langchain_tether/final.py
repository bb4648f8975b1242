"""The final-answer check: an answer that skipped a lookup the task names, states values no
result holds, or leaves undone a change the task asked for, is sent back once with a note;
the second answer is taken as written."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import tether.decisions as decisions
from langchain.agents.middleware import types as lc
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import BaseTool
from langgraph.types import Overwrite
from tether import AgentSettings
from tether.decisions.grounding import heard

from langchain_tether.budget import AsyncModelHandler, ModelHandler
from langchain_tether.calls import ModelCall
from langchain_tether.common import NOTE_ID
from langchain_tether.tooling import ToolStep


def fold_grounds(current: dict[str, Any], call: dict[str, Any]) -> dict[str, Any]:
    """Reducer: the run's grounds (``{}`` before any call) with one more tool call folded in
    by :func:`tether.decisions.final_check.record_result`."""
    grounds: Any = current or None
    folded = decisions.record_result(
        grounds, call["task"], call["tool"], call["arguments"], call["result"]
    )
    return dict(folded)


class FinalAnswerCheck:
    """The final-answer check, a part of :class:`langchain_tether.TetherMiddleware` (it shares
    the run's state and wrappers with the stop rules). It runs
    :func:`tether.decisions.final_check.check_final` on a reply without tool calls. When it
    returns a note, the note is added as a user message after the reply and the model is
    asked again in the same step (the wrappers inside see the second call too), once per
    run. The note holds tether's words, registered tool names and single-token values only:
    no text of a tool or of the model.

    ``tools``: the agent's tools (the check looks for a lookup or a change the task names);
    unset, the tools of the model requests it has seen are used. Settings: ``check_final``;
    ``look_first``: while nothing has run and the task names something a read tool can look
    up, the model is asked for a tool call.
    """

    settings: AgentSettings

    def __init__(self, tools: Sequence[BaseTool] | None = None) -> None:
        self._tools: dict[str, BaseTool] = {tool.name: tool for tool in tools or ()}

    def fresh_check(self, state: Any) -> dict[str, Any]:
        """The check's fields as a run starts: the task is the user's message. What the
        thread's calls established (the grounds) stays, with what the user said, as in the
        loop."""
        messages = state.get("messages") or []
        task = messages[-1].text if messages and isinstance(messages[-1], HumanMessage) else ""
        grounds = Overwrite(dict(heard(state.get("tether_grounds") or None, task)))
        return {"tether_task": task, "tether_grounds": grounds, "tether_sent_back": False}

    def note(
        self,
        view: Any,
        request: lc.ModelRequest[Any],
        response: lc.ModelResponse[Any],
        call: ModelCall,
    ) -> str | None:
        """The note to send the reply back with, or None to take it."""
        reply = response.result[-1] if response.result else None
        if not isinstance(reply, AIMessage) or reply.tool_calls or not self.settings.check_final:
            return None
        if view.get("tether_sent_back") or view.get("tether_status"):
            return None  # sent back once already in this run
        if call.closing is not None or call.ended:
            return None  # an answer tether asked for at a stop, or one it ended the run with
        task = view.get("tether_task") or ""
        grounds: Any = view.get("tether_grounds") or None
        system = request.system_message.text if request.system_message else None
        tools = list(self._tools.values())
        return decisions.check_final(task, reply.text, grounds, tools, context=system)

    def looked_first(self, view: Any, request: lc.ModelRequest[Any]) -> lc.ModelRequest[Any]:
        """The request, asking for a tool call (``tool_choice`` required) while nothing has
        run and the task names something a read tool can look up (``look_first``, as the
        loop's offer: :func:`tether.decisions.offer.look_first`)."""
        ran = (view.get("tether_grounds") or {}).get("tried")
        if not self.settings.look_first or ran or not request.tools:
            return request
        if request.tool_choice not in (None, "auto") or view.get("tether_sent_back"):
            return request
        tools = [tool for tool in request.tools if isinstance(tool, BaseTool)]
        if decisions.first_lookup(view.get("tether_task") or "", tools) is None:
            return request
        return request.override(tool_choice="required")

    def checked(
        self, view: Any, request: lc.ModelRequest[Any], handler: ModelHandler, call: ModelCall
    ) -> tuple[lc.ModelResponse[Any], bool]:
        """The step's response: the model's reply, or the reply, the note and the second
        reply when it was sent back (and whether it was)."""
        request = self.looked_first(view, request)
        response = handler(request)
        note = self.note(view, request, response, call)
        if note is None:
            return response, False
        again, sent = _sent_back(request, response, note)
        return _joined(response, sent, handler(again)), True

    async def achecked(
        self, view: Any, request: lc.ModelRequest[Any], handler: AsyncModelHandler, call: ModelCall
    ) -> tuple[lc.ModelResponse[Any], bool]:
        """:meth:`checked`, for an async handler."""
        request = self.looked_first(view, request)
        response = await handler(request)
        note = self.note(view, request, response, call)
        if note is None:
            return response, False
        again, sent = _sent_back(request, response, note)
        return _joined(response, sent, await handler(again)), True

    def learn(self, request: lc.ModelRequest[Any]) -> None:
        """The tools of a request, for the check when the agent's were not given."""
        for tool in request.tools:
            if isinstance(tool, BaseTool) and tool.name not in self._tools:
                self._tools[tool.name] = tool

    def grounds_update(self, step: ToolStep) -> dict[str, Any]:
        """What the call established (a call tether answered from its record establishes
        nothing new)."""
        request = step.request
        if step.call.gate in ("recall", "repeat"):
            return {}
        call = {
            "task": request.state.get("tether_task") or "",
            "tool": request.tool_call["name"],
            "arguments": request.tool_call.get("args") or {},
            "result": step.result,
        }
        return {"tether_grounds": call}


def _sent_back(
    request: lc.ModelRequest[Any], response: lc.ModelResponse[Any], note: str
) -> tuple[lc.ModelRequest[Any], HumanMessage]:
    """The request that asks again: the answer, then the note (kept in the conversation,
    since the model answers it)."""
    reply = response.result[-1]
    sent = HumanMessage(note, id=f"{NOTE_ID}check-{reply.id or uuid.uuid4()}")
    messages: list[Any] = [*request.messages, *response.result, sent]
    return request.override(messages=messages), sent


def _joined(
    first: lc.ModelResponse[Any], sent: HumanMessage, again: lc.ModelResponse[Any]
) -> lc.ModelResponse[Any]:
    """Both answers and the note between them, as the step's messages."""
    return lc.ModelResponse(
        result=[*first.result, sent, *again.result], structured_response=again.structured_response
    )
