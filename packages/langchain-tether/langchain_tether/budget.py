"""The token budget, checked before each model call: a call that would cross it is not made;
the run ends with an answer asked for within what is left (``cap_answer``), as the loop does.
"""

from __future__ import annotations

import functools
import json
import operator
import weakref
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware.types import (
    AgentMiddleware,
    ContextT,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    PrivateStateAttr,
    ResponseT,
)
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from tether.decisions import policy
from tether.memory.tokens import MESSAGE_OVERHEAD, TiktokenCounter, TokenCounter, count_messages
from tether.settings import AgentSettings
from tether.state import Usage, Verdict, add_usage

from langchain_tether.closing import Plan, closed, closing_of, is_closed, plan_call
from langchain_tether.common import (
    STOP_ID,
    TetherState,
    as_settings,
    last_reply,
    run_view,
)
from langchain_tether.kept import signed

ModelHandler = Callable[[ModelRequest[Any]], ModelResponse[Any]]
AsyncModelHandler = Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]


class TokenBudgetState(TetherState[ResponseT]):
    tether_usage: NotRequired[Annotated[Usage | None, PrivateStateAttr]]
    """Tokens this run spent: the server's usage, or a count when it reports none."""


@signed
class TokenBudgetMiddleware(AgentMiddleware[TokenBudgetState[ResponseT], ContextT, ResponseT]):
    """Counts each model request (messages and tool schemas, with tether's counter) and asks
    :func:`tether.decisions.policy.before_call` whether it fits the run's ``token_budget``,
    keeping ``max_tokens`` in reserve for a last answer when ``cap_answer`` is on. When it
    does not fit, the call is not made: the model is asked, with no tools, for its answer
    from what is known (if that call fits), and the run ends ``partial``.

    Hooks: ``wrap_model_call`` (no graph node of its own). State: the run's usage
    (private), ``tether_status`` and ``tether_reason``. Settings: ``token_budget``,
    ``max_tokens``, ``cap_answer``. ``counter``: any :class:`tether.memory.TokenCounter`
    (tiktoken's cl100k_base, offline, by default; a server's ``/tokenize`` counts exactly).
    """

    state_schema = TokenBudgetState  # type: ignore[assignment]

    def __init__(
        self, settings: AgentSettings | None = None, *, counter: TokenCounter | None = None
    ) -> None:
        super().__init__()
        self.settings = as_settings(settings)
        self.counter = counter or TiktokenCounter()
        self._counted: dict[int, tuple[weakref.ref[BaseMessage], int]] = {}
        self._last: tuple[tuple[BaseMessage, ...], int] = ((), 0)
        self._last_bound: tuple[tuple[BaseMessage, ...], int] = ((), 0)
        self._tools: tuple[tuple[BaseTool | dict[str, Any], ...], int] = ((), 0)

    def wrap_model_call(
        self, request: ModelRequest[ContextT], handler: ModelHandler
    ) -> ModelResponse[Any] | ExtendedModelResponse[Any]:
        view, update = run_view(request.state, _fresh)
        plan, tokens, spent = self._plan(request, view)
        stop = plan.stopped(update)
        if stop is not None:
            return stop
        response = handler(plan.request)
        return plan.finish(response, update | self._usage(spent, response, tokens))

    async def awrap_model_call(
        self, request: ModelRequest[ContextT], handler: AsyncModelHandler
    ) -> ModelResponse[Any] | ExtendedModelResponse[Any]:
        view, update = run_view(request.state, _fresh)
        plan, tokens, spent = self._plan(request, view)
        stop = plan.stopped(update)
        if stop is not None:
            return stop
        response = await handler(plan.request)
        return plan.finish(response, update | self._usage(spent, response, tokens))

    # --- the decision -----------------------------------------------------------------------

    def _plan(
        self, request: ModelRequest[Any], view: Any
    ) -> tuple[Plan, Callable[[], int], Usage | None]:
        """The call to make (closed for the last answer when it does not fit), or the stop
        that replaces it; the request's tokens (counted when asked for); what the run spent
        before it."""
        spent = self.spent(request, view)
        plan = plan_call(request, view.get("tether_stop"), self.settings)
        if plan.stop is not None:
            return plan, _none, spent
        closing = plan.closing or closing_of(request)
        bound = self.request_bound(plan.request)
        if bound is not None and self._check(spent, closing, bound) is None:
            # it fits with room for every text's most tokens: it fits as counted
            return plan, functools.partial(self.request_tokens, plan.request), spent
        tokens = self.request_tokens(plan.request)
        verdict = self._check(spent, closing, tokens)
        if verdict is None:
            return plan, _counted(tokens), spent
        if closing is not None or is_closed(plan.request):  # the last answer does not fit
            return Plan(plan.request, stop=closing or verdict, unasked=True), _none, spent
        if not self.settings.cap_answer:
            return Plan(plan.request, stop=verdict), _none, spent
        last = closed(plan.request, verdict)
        tokens = self.request_tokens(last)
        if self._check(spent, verdict, tokens) is not None:
            return Plan(last, stop=verdict, unasked=True), _none, spent
        return Plan(last, closing=verdict), _counted(tokens), spent

    def _check(self, spent: Usage | None, closing: Verdict | None, tokens: int) -> Verdict | None:
        view: Any = {"usage": spent, "closing": closing}
        return policy.before_call(view, self.settings, prompt_tokens=tokens, cancelled=None)

    def spent(self, request: ModelRequest[Any], view: Any) -> Usage | None:
        """What the run spent before this call: the state's usage, and the calls made
        earlier in this step (replies in the request the state does not hold yet, e.g. an
        answer the final-answer check sent back)."""
        usage: Usage | None = view.get("tether_usage")
        held = view.get("messages") or ()
        if len(held) == len(request.messages) and all(map(operator.is_, held, request.messages)):
            return usage  # the request's messages are the state's: none is new
        known = {message.id for message in held}
        messages = list(request.messages)
        for at, message in enumerate(messages):
            if isinstance(message, AIMessage) and message.id and message.id not in known:
                earlier = request.override(messages=messages[:at])
                prompt = functools.partial(self.request_tokens, earlier)
                usage = add_usage(usage, self._spent(message, prompt))
        return usage

    # --- counting ---------------------------------------------------------------------------

    def request_tokens(self, request: ModelRequest[Any]) -> int:
        """The request's prompt as tether counts one: each message (tool calls' arguments
        included) and the tool schemas' JSON."""
        return self._prompt(request, self.messages_tokens)

    def schemas_tokens(self, tools: list[BaseTool | dict[str, Any]]) -> int:
        """The tool schemas' tokens, kept for the last list of tools (the same tools are
        offered at every step; a schema is its tool's, as :func:`schema_text` keeps it)."""
        last, total = self._tools
        if len(last) == len(tools) and all(map(operator.is_, last, tools)):
            return total
        total = sum(self.counter.count(schema_text(tool)) for tool in tools)
        self._tools = (tuple(tools), total)
        return total

    def request_bound(self, request: ModelRequest[Any]) -> int | None:
        """At least the request's tokens (:meth:`request_tokens`), with no text counted that
        was not counted before: a text's tiktoken tokens are a byte of it each at least, so
        its UTF-8 bytes bound them. None with another counter (no such bound)."""
        if type(self.counter) is not TiktokenCounter:
            return None
        return self._prompt(request, self._messages_bound)

    def _prompt(
        self, request: ModelRequest[Any], messages_by: Callable[[list[BaseMessage]], int]
    ) -> int:
        """The request's prompt: its messages (the system message first) by ``messages_by``,
        the tool schemas' tokens, and the tools' overhead."""
        messages: list[BaseMessage] = list(request.messages)
        if request.system_message is not None:
            messages.insert(0, request.system_message)
        overhead = MESSAGE_OVERHEAD if request.tools else 0
        return messages_by(messages) + self.schemas_tokens(request.tools) + overhead

    def _messages_bound(self, messages: list[BaseMessage]) -> int:
        """The messages' bound, kept on from the last request's as their count is."""
        self._last_bound = _counted_on(self._last_bound, messages, self._message_bound)
        return self._last_bound[1]

    def _message_bound(self, message: BaseMessage) -> int:
        """The message's count when it was counted, else its texts' UTF-8 bytes (as
        :meth:`message_tokens` counts its texts)."""
        kept = self._counted.get(id(message))
        if kept is not None and kept[0]() is message:
            return kept[1]
        bound = _bytes(message.text) + MESSAGE_OVERHEAD
        if isinstance(message, AIMessage) and message.tool_calls:
            bound += _bytes(_call_text(message))
        return bound

    def messages_tokens(self, messages: list[BaseMessage]) -> int:
        """The messages' tokens, counted on from the last request's when they start with its
        messages (a step's request is the last one's and the messages since)."""
        self._last = _counted_on(self._last, messages, self.message_tokens)
        return self._last[1]

    def message_tokens(self, message: BaseMessage) -> int:
        """One message as :func:`tether.memory.count_messages` counts it, with its tool calls'
        names and arguments; kept while the message lives (a run's messages are counted
        again at every step)."""
        key = id(message)
        kept = self._counted.get(key)
        if kept is not None and kept[0]() is message:
            return kept[1]
        tokens = count_messages(self.counter, [message])
        if isinstance(message, AIMessage) and message.tool_calls:
            tokens += self.counter.count(_call_text(message))
        if len(self._counted) >= COUNTED_KEPT:
            self._forget()
        self._counted[key] = (weakref.ref(message), tokens)
        return tokens

    def _forget(self) -> None:
        """Drop the counts of messages that are gone (all of them, if none is)."""
        alive = {k: kept for k, kept in self._counted.items() if kept[0]() is not None}
        self._counted = alive if len(alive) < COUNTED_KEPT // 2 else {}

    def _usage(
        self, spent: Usage | None, response: ModelResponse[Any], tokens: Callable[[], int]
    ) -> dict[str, Any]:
        """The run's usage after the call (a stop message a wrapper inside answered with
        spent nothing)."""
        reply = last_reply(response.result)
        if reply is None or str(reply.id or "").startswith(STOP_ID):
            return {"tether_usage": spent} if spent is not None else {}
        return {"tether_usage": add_usage(spent, self._spent(reply, tokens))}

    def _spent(self, reply: AIMessage, prompt: Callable[[], int]) -> Usage:
        """What one call spent: the server's usage when it adds up, else the prompt's count
        and the reply's."""
        meta: Any = reply.usage_metadata
        if meta:  # counts (ints, none negative) that add up
            sent, out, total = (
                meta.get("input_tokens"),
                meta.get("output_tokens"),
                meta.get("total_tokens"),
            )
            if (
                isinstance(sent, int)
                and isinstance(out, int)
                and isinstance(total, int)
                and min(sent, out, total) >= 0
                and total == sent + out > 0
            ):
                return {"input_tokens": sent, "output_tokens": out, "total_tokens": total}
        tokens = prompt()
        written = self.counter.count(reply.text) + self.counter.count(_call_text(reply))
        return {
            "input_tokens": tokens,
            "output_tokens": written,
            "total_tokens": tokens + written,
        }


def _none() -> int:
    return 0


def _counted(tokens: int) -> Callable[[], int]:
    return lambda: tokens


def _bytes(text: str) -> int:
    """UTF-8 bytes of the text (a lone surrogate as three, as tiktoken reads it)."""
    return len(text.encode("utf-8", "surrogatepass"))


def _fresh(state: Any) -> dict[str, Any]:
    """The budget's field as a run starts."""
    return {"tether_usage": None}


COUNTED_KEPT = 4096
"""Messages whose count is kept (a message's count is checked against the message itself,
so a count is never taken for another message)."""
SCHEMAS_KEPT = 256
_schemas: dict[int, tuple[BaseTool | dict[str, Any], str]] = {}


def schema_text(tool: BaseTool | dict[str, Any]) -> str:
    """The tool's schema as the model is sent it (OpenAI's JSON), kept per tool object:
    building it takes longer than a model step's own work."""
    kept = _schemas.get(id(tool))
    if kept is not None and kept[0] is tool:
        return kept[1]
    text = json.dumps(convert_to_openai_tool(tool), ensure_ascii=False)
    if len(_schemas) >= SCHEMAS_KEPT:
        _schemas.clear()
    _schemas[id(tool)] = (tool, text)
    return text


_JSON = json.JSONEncoder(ensure_ascii=False)  # json.dumps with options builds one per call


def _call_text(message: AIMessage) -> str:
    return " ".join(f"{c['name']} {_JSON.encode(c['args'])}" for c in message.tool_calls)


def _counted_on(
    last: tuple[tuple[BaseMessage, ...], int],
    messages: list[BaseMessage],
    count: Callable[[BaseMessage], int],
) -> tuple[tuple[BaseMessage, ...], int]:
    """``messages`` and their total by ``count``, counted on from ``last`` (the previous
    request's messages and total) when they start with those very messages."""
    seen, total = last
    if len(seen) <= len(messages) and all(map(operator.is_, seen, messages)):
        return tuple(messages), total + sum(map(count, messages[len(seen) :]))
    return tuple(messages), sum(map(count, messages))
