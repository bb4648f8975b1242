"""think: build the prompt, check it against the budget, call the model and parse the reply.

An action is gated (run, ask, refuse, or end on a repeat) and handed to the next node; an
answer, an unreadable reply or a repeat closes the step here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import takewhile
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langgraph.config import get_config
from tether.decisions import policy
from tether.decisions.final_check import check_final
from tether.decisions.notes import cap_ending
from tether.decisions.offer import step_offer
from tether.decisions.replies import asks_user
from tether.errors import ModelCallError
from tether.llm.parsing import call_fingerprint
from tether.memory.render import reasoning_text, render_prompt
from tether.memory.tokens import TokenCounter, count_messages, tool_call_text
from tether.nodes.base import Node, emit
from tether.nodes.deps import Prepared
from tether.nodes.step import ask_at_cap, close_step, end_run, grounds
from tether.settings import AgentSettings, check_tool_names
from tether.state import AgentState, Proposal, ReasoningEntry, Usage, Verdict, add_usage, windowed
from tether.tools.safe import json_safe
from tether.vocabulary import NextMove

GATED_MOVES: dict[str, NextMove] = {"run": "act", "approve": "approve", "refuse": "refuse"}
"""The node a gated call goes to (a repeat closes the step in think)."""


@dataclass
class Call:
    """A model call about to be made."""

    step: int
    prepared: Prepared
    messages: list[BaseMessage]
    prompt_tokens: int
    kwargs: dict[str, Any]


class Think(Node):
    def run(self, state: AgentState, settings: AgentSettings) -> dict[str, Any]:
        call = self._prepare(state, settings)
        if isinstance(call, dict):
            return call
        try:
            reply = call.prepared.model.invoke(call.messages, **call.kwargs)
        except Exception as exc:
            reply = _reply_or_raise(exc, call, settings)
        return self._conclude(state, call, reply, settings)

    async def arun(self, state: AgentState, settings: AgentSettings) -> dict[str, Any]:
        call = await self.off_loop(self._prepare, state, settings)
        if isinstance(call, dict):
            return call
        try:
            reply = await call.prepared.model.ainvoke(call.messages, **call.kwargs)
        except Exception as exc:
            reply = _reply_or_raise(exc, call, settings)
        return await self.off_loop(self._conclude, state, call, reply, settings)

    def _prepare(self, state: AgentState, settings: AgentSettings) -> Call | dict[str, Any]:
        """The prompt and call, or the update that stops the run before anything is spent."""
        check_tool_names(settings, self.deps.registry.names())  # tools may change between steps
        offer = step_offer(state, self.deps.registry.tools(), settings)
        prepared = self.deps.prepared(settings, offer)
        step = state.get("steps", 0) + 1
        rendered = render_prompt(
            frame=prepared.frame,
            task=state["task"],
            reasoning=state.get("reasoning_buffer", []),
            results=state.get("tool_buffer", []),
            hints=[*state.get("hints", []), *prepared.protocol.notes(offer)],
            budget=policy.prompt_budget(state, settings),
            counter=self.deps.counter_for(settings),
            view=offer.profile.result_view(settings),
            earlier=state.get("conversation", [])[:-1],  # the last is the task
        )
        if rendered.dropped_reasoning or rendered.cut_results or rendered.dropped_turns:
            emit(
                step,
                "memory_trimmed",
                {
                    "budget": settings.memory_budget,
                    "dropped_reasoning": rendered.dropped_reasoning,
                    "cut_results_from_steps": rendered.cut_results,
                    "dropped_turns": rendered.dropped_turns,
                },
            )
        verdict = policy.before_call(
            state, settings, prompt_tokens=rendered.tokens, cancelled=self._cancel_request()
        )
        if verdict:
            emit(step, "decision", {"stop": verdict})
            if last_call := ask_at_cap(state, verdict, settings):
                return last_call | {"hints": [*state.get("hints", []), *last_call["hints"]]}
            return end_run(state, _unasked(state.get("closing"), verdict))
        temperature = offer.profile.sampling_temperature(state, settings)
        kwargs = {**prepared.call_kwargs, "temperature": temperature}
        return Call(step, prepared, rendered.messages, rendered.tokens, kwargs)

    def _cancel_request(self) -> str | None:
        store = self.deps.cancel_store
        thread_id = get_config().get("configurable", {}).get("thread_id")
        if store is None or thread_id is None:
            return None
        return store.requested(str(thread_id))

    def _conclude(
        self, state: AgentState, call: Call, reply: AIMessage, settings: AgentSettings
    ) -> dict[str, Any]:
        if not isinstance(reply, AIMessage):
            raise ModelCallError(f"the model returned {type(reply).__name__}, not an AIMessage")
        reply = _encodable(reply)
        counter = self.deps.counter_for(settings)
        protocol = call.prepared.protocol
        usage, usage_note = checked_usage(reply, call, counter, settings)
        truncated = reply.response_metadata.get("finish_reason") == "length"
        repair_for = call.prepared.tools if settings.repair_output else []
        proposal = protocol.parse(reply, truncated=truncated, repair_for=repair_for)
        proposal["raw"] = reply.text
        entry: ReasoningEntry = {
            "step": call.step,
            "thought": proposal["thought"],
            "action": proposal.get("tool"),
            "action_input": proposal.get("arguments"),
            "tokens": 0,
        }
        entry["tokens"] = counter.count(reasoning_text(entry))
        update: dict[str, Any] = {
            "steps": call.step,
            "usage": usage,
            "proposal": proposal,
            "result": None,
            "rule": None,
            "call_attempt": 0,
            "reasoning_buffer": windowed([entry], settings.reasoning_window),
        }
        if proposal["kind"] == "action":
            tool = self.deps.registry.get(proposal.get("tool", ""))
            proposal["registered"] = tool is not None
            proposal["fingerprint"] = call_fingerprint(
                tool, proposal["tool"], proposal["arguments"]
            )
            decided = policy.gate(state, proposal, tool, settings, call.prepared.offer)
            proposal["gate"] = decided.gate
            if decided.reason is not None:
                proposal["gate_reason"] = decided.reason
        emit(call.step, "model_call", _call_detail(state, call, usage, usage_note, proposal))
        if usage_note:
            emit(call.step, "usage_counted", {"note": usage_note})
        proposal.pop("raw", None)  # kept in the trace, not in every checkpoint
        if closing := state.get("closing"):
            return update | self._last_answer(state, call, usage, proposal, closing)
        if proposal["kind"] == "action" and proposal["gate"] in GATED_MOVES:
            return update | {"next": GATED_MOVES[proposal["gate"]]}
        if proposal["kind"] == "final":
            self._check(state, call, proposal, settings)
        closed = close_step(
            state,
            settings,
            counter,
            proposal=proposal,
            result=None,
            protocol=protocol,
            model_call=(call.step, usage),
        )
        return update | closed

    def _check(
        self, state: AgentState, call: Call, proposal: Proposal, settings: AgentSettings
    ) -> None:
        """Mark a final answer with ``check``, the note it is sent back with, once per run (not
        on a final-answer-only step: the model was already told to answer from what it has);
        else ``unbacked`` when the profile finds it states nothing the run found. The task
        checked is this message after those tether answered with a question ("Which order?"
        leaves "pay my order" open), not requests an answer already closed."""
        tools, offer = self.deps.registry.tools(), call.prepared.offer
        answer = proposal.get("answer", "")
        if settings.check_final and not (state.get("sent_back") or offer.final_only):
            said = reversed(state.get("conversation", []))  # this message, then the ones before
            still = takewhile(lambda turn: turn["role"] == "user" or asks_user(turn["text"]), said)
            task = "\n".join(t["text"] for t in [*still][::-1] if t["role"] == "user")
            held, context = grounds(state), settings.instructions
            if note := check_final(task or state["task"], answer, held, tools, context=context):
                proposal["check"] = note
                return
        if offer.profile.unbacked(state, answer, tools):
            proposal["unbacked"] = True

    @staticmethod
    def _last_answer(
        state: AgentState, call: Call, usage: Usage, proposal: Proposal, closing: Verdict
    ) -> dict[str, Any]:
        """The run ends with the cap's verdict, and the answer the last call gave, if any."""
        answer = proposal.get("answer", "").strip() if proposal["kind"] == "final" else ""
        why = cap_ending(closing["reason"], answer)
        spent: AgentState = {
            **state,
            "steps": call.step,
            "usage": add_usage(state.get("usage"), usage),
        }
        return end_run(spent, {**closing, "reason": why}, answer or None)


def _unasked(closing: Verdict | None, verdict: Verdict) -> Verdict:
    """The verdict when the last answer's call does not fit: the cap's, saying so."""
    if closing is None or verdict["status"] == "cancelled":
        return verdict
    return {**closing, "reason": f"{closing['reason']}; no room left to ask for an answer"}


def _encodable(reply: AIMessage) -> AIMessage:
    """The reply with lone surrogates escaped, as in tool text (``json_safe``): not UTF-8,
    they would crash the token counter, the run store's trace and the terminal."""
    parts = {"content": reply.content, "tool_calls": reply.tool_calls}
    try:
        json.dumps(parts, ensure_ascii=False, default=str).encode("utf-8")
    except UnicodeEncodeError:
        return reply.model_copy(update=json_safe(parts))  # type: ignore[arg-type]
    return reply


def checked_usage(
    reply: AIMessage, call: Call, counter: TokenCounter, settings: AgentSettings
) -> tuple[Usage, str | None]:
    """The server's usage when it is plausible; otherwise a count, and why (for the trace).

    Usage is untrusted input: negative, non-integer, inconsistent or absurd figures (more
    than four times the prompt's own count plus a margin, or more output than max_tokens
    allows; or under a quarter of the prompt's or the reply's own count, less a margin)
    would trip a run's budget at once or let it spend without limit.
    """
    meta: Any = reply.usage_metadata
    output = counter.count(reply.text) + counter.count(tool_call_text(reply))
    problem = policy.usage_problem(meta, (call.prompt_tokens, output), settings.max_tokens)
    if problem is None:  # the server's figures add up (usage_problem checks it)
        sent, written = meta["input_tokens"], meta["output_tokens"]
    else:
        sent, written = count_messages(counter, call.messages), output
    return {"input_tokens": sent, "output_tokens": written, "total_tokens": sent + written}, problem


def _call_detail(
    state: AgentState, call: Call, usage: Usage, usage_note: str | None, proposal: Proposal
) -> dict[str, Any]:
    detail: dict[str, Any] = {
        "temperature": call.kwargs["temperature"],
        "offered": [tool.name for tool in call.prepared.tools],
        "withheld": dict(call.prepared.offer.withheld),
        "final_only": call.prepared.offer.final_only,
        "calls_only": call.prepared.offer.calls_only,
        "usage": usage,
        "usage_source": "server" if usage_note is None else "counted",
        "prompt_estimate": call.prompt_tokens,
        "kind": proposal["kind"],
        "thought": proposal["thought"],
    }
    for key in ("tool", "arguments", "answer", "error", "gate", "repairs", "raw"):
        if key in proposal:
            detail[key] = proposal[key]  # type: ignore[literal-required]
    return detail


def _reply_or_raise(exc: Exception, call: Call, settings: AgentSettings) -> AIMessage:
    """A reply cut off inside a schema-constrained parse becomes a truncated reply; any
    other failure of the endpoint is a ModelCallError that names it."""
    if not any(cls.__module__.startswith("openai") for cls in type(exc).__mro__):
        raise exc
    import openai  # only an OpenAI client raises these; importing it costs start-up time

    where = _where(call, settings)
    if isinstance(exc, openai.LengthFinishReasonError):
        return _cut_off_reply(exc)
    if isinstance(exc, openai.APITimeoutError):  # a subclass of APIConnectionError
        raise ModelCallError(
            f"the model at {where} did not answer within {settings.request_timeout:g}s "
            "(raise request_timeout for a slow server)"
        ) from exc
    if isinstance(exc, openai.APIConnectionError):
        raise ModelCallError(f"cannot reach the model at {where}: {exc}") from exc
    if isinstance(exc, openai.APIStatusError):
        raise ModelCallError(f"the model server answered {exc.status_code}: {exc.message}") from exc
    raise exc


def _where(call: Call, settings: AgentSettings) -> str:
    model = call.prepared.model
    bound = getattr(model, "bound", model)  # native protocol wraps the model in a binding
    return str(getattr(bound, "openai_api_base", None) or settings.base_url or "the endpoint")


def _cut_off_reply(exc: Any) -> AIMessage:
    """The truncated text and its usage, so the step is a parse failure that counts."""
    completion = exc.completion
    text = (completion.choices[0].message.content or "") if completion.choices else ""
    usage = completion.usage
    meta: Any = None
    if usage is not None:
        meta = {
            "input_tokens": usage.prompt_tokens,
            "output_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens,
        }
    return AIMessage(text, usage_metadata=meta, response_metadata={"finish_reason": "length"})
