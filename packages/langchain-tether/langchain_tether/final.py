"""A reply asked again within its model call, as the loop asks at its next step: one that
cannot be used (the loop's parse failure), with the loop's note, until a stop rule ends the
run; and, once, an answer the final-answer check sends back (it skipped a lookup the task
names, states values no result holds, or leaves undone a change the task asked for)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import tether.decisions as decisions
from langchain.agents.middleware import types as lc
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import BaseTool
from langgraph.types import Overwrite
from tether import AgentSettings
from tether.decisions import Proposal, StepRecord, StopFacts, Verdict
from tether.decisions.grounding import heard
from tether.llm import NativeProtocol

from langchain_tether.budget import Made
from langchain_tether.calls import ModelCall
from langchain_tether.common import NOTE_ID, Request, Response, facts_of, step_of
from langchain_tether.drive import Steps
from langchain_tether.tooling import ToolStep

NATIVE = NativeProtocol()
"""How the loop reads a reply of a server's own tool calls, and its note on one it cannot use."""


@dataclass
class Asked:
    """A step's model calls, as :meth:`FinalAnswerCheck.asking` made them."""

    request: Any = None  # the last request, with its reply: where a stop's last call goes on
    response: Any = None  # every reply of the step and the notes between them, in order
    calls: int = 0  # model calls made (each a step of the run, as in the loop)
    records: list[StepRecord] = field(default_factory=list)  # the unusable replies' records
    verdict: Verdict | None = None  # a stop rule's, on an unusable reply
    sent_back: bool = False  # the check sent an answer back

    def judged(
        self, view: Any, proposal: Proposal, settings: AgentSettings
    ) -> tuple[StepRecord, StopFacts]:
        """The step's last reply as ``proposal`` (its record), and the stop rules' facts then."""
        step = step_of(view) + self.calls
        record = decisions.classify(step, proposal, None, None, settings)
        return record, facts_of({**view, "tether_step": step}, also=[*self.records, record])

    def update(self, view: Any, window: int) -> dict[str, Any]:
        """The run's fields after the step (the history whole: a run's first step replaces
        what the last run left)."""
        update: dict[str, Any] = {"tether_step": step_of(view) + self.calls}
        update |= {"tether_sent_back": True} if self.sent_back else {}
        if self.records:
            history = [*(view.get("tether_history") or []), *self.records]
            update["tether_history"] = history[-window:]
        return update


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
        grounds = dict(heard(folded(state)[0]["tether_grounds"], task))
        folds = {"tether_grounds": grounds, "tether_unfolded": Overwrite([])}
        return {"tether_task": task, **folds, "tether_sent_back": False}

    def note(self, view: Any, request: Request, response: Response, call: ModelCall) -> str | None:
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

    def looked_first(self, view: Any, request: Request) -> Request:
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

    def asking(
        self, view: Any, request: Request, call: ModelCall, passes: Made
    ) -> Steps[Request, Response, Asked]:
        """The step's model calls (``passes`` makes each): a reply that cannot be used is
        asked again with the loop's note, each time a step of its own, until a stop rule ends
        the run (:meth:`unusable`); an answer the check sends back is asked again once. The
        replies and notes stay in the conversation: the model answers them."""
        request, asked = self.looked_first(view, request), Asked()
        kept: list[Any] = []
        while True:
            response = yield from passes(request)
            asked.calls += 1
            note = self.unusable(view, response, call, asked)
            if note is None and asked.verdict is None and not asked.sent_back:
                note = self.note(view, request, response, call)
                asked.sent_back = note is not None
            messages: list[Any] = [*request.messages, *response.result]
            request, result = request.override(messages=messages), [*kept, *response.result]
            if note is None:
                asked.request = request
                asked.response = lc.ModelResponse(result, response.structured_response)
                return asked
            sent = HumanMessage(note, id=f"{NOTE_ID}again-{uuid.uuid4()}")
            kept = [*result, sent]
            request = request.override(messages=[*request.messages, sent])

    def unusable(self, view: Any, response: Response, call: ModelCall, asked: Asked) -> str | None:
        """The note a reply is asked again with when it cannot be used (no tool call, and cut
        off at ``max_tokens``, empty, or its tool calls unreadable: the loop's parse failure),
        as the loop writes it; None for a usable reply, or when a stop rule ends the run on
        it (``asked.verdict``)."""
        reply = response.result[-1] if response.result else None
        if not isinstance(reply, AIMessage) or reply.tool_calls or call.closing or call.ended:
            return None
        truncated = reply.response_metadata.get("finish_reason") == "length"
        proposal = NATIVE.parse(reply, truncated=truncated)
        if proposal["kind"] != "invalid":
            return None
        record, facts = asked.judged(view, proposal, self.settings)
        asked.records.append(record)
        asked.verdict = decisions.first_stop(facts, self.settings)
        if asked.verdict is not None:
            return None
        hints = decisions.hints_after(list(facts.history), facts.failure_streak, self.settings)
        return "\n\n".join([NATIVE.failure_note(asked.records[-1]["summary"]), *hints])

    def learn(self, request: Request) -> None:
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
        task, call = request.state.get("tether_task") or "", request.tool_call
        return {"tether_unfolded": [[task, call["name"], call.get("args") or {}, step.result]]}


def folded(view: Any) -> tuple[Any, dict[str, Any]]:
    """The run's view with the tool calls not in its grounds yet folded in
    (:func:`tether.decisions.final_check.record_result`), and the update that writes them."""
    grounds, calls = view.get("tether_grounds") or None, view.get("tether_unfolded") or []
    for call in calls:
        grounds = decisions.record_result(grounds, *call)
    update = {"tether_grounds": grounds, "tether_unfolded": Overwrite([])} if calls else {}
    return {**view, "tether_grounds": grounds, "tether_unfolded": []}, update
