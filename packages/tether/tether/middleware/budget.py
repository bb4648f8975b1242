"""The token budget, checked before each model call: a call that would cross it is not made;
the run ends with an answer asked for within what is left (``cap_answer``), as the loop does.
"""

from __future__ import annotations

import json
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
from langgraph.runtime import Runtime

from tether.decisions import policy
from tether.memory.tokens import MESSAGE_OVERHEAD, TiktokenCounter, TokenCounter, count_messages
from tether.middleware.closing import Plan, close_if_asked, closed, is_closed, stopped
from tether.middleware.common import TetherState, as_settings, counted, latest, new_run
from tether.settings import AgentSettings
from tether.state import Usage, Verdict, add_usage

ModelHandler = Callable[[ModelRequest[Any]], ModelResponse[Any]]
AsyncModelHandler = Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]


class TokenBudgetState(TetherState[ResponseT]):
    tether_usage: NotRequired[Annotated[Usage | None, PrivateStateAttr, latest]]
    """Tokens this run spent: the server's usage, or a count when it reports none."""


class TokenBudgetMiddleware(AgentMiddleware[TokenBudgetState[ResponseT], ContextT, ResponseT]):
    """Counts each model request (messages and tool schemas, with tether's counter) and asks
    :func:`tether.decisions.policy.before_call` whether it fits the run's ``token_budget``,
    keeping ``max_tokens`` in reserve for a last answer when ``cap_answer`` is on. When it
    does not fit, the call is not made: the model is asked, with no tools, for its answer
    from what is known (if that call fits), and the run ends ``partial``.

    Hooks: ``before_agent`` (a new run's fields), ``wrap_model_call``. State: the run's
    usage (private), ``tether_status`` and ``tether_reason``. Settings: ``token_budget``,
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
        self._schemas: dict[int, tuple[Any, int]] = {}

    def before_agent(self, state: Any, runtime: Runtime[ContextT]) -> dict[str, Any] | None:
        return {**new_run(), "tether_usage": None}

    async def abefore_agent(self, state: Any, runtime: Runtime[ContextT]) -> dict[str, Any] | None:
        return self.before_agent(state, runtime)

    def wrap_model_call(
        self, request: ModelRequest[ContextT], handler: ModelHandler
    ) -> ExtendedModelResponse[Any]:
        plan, tokens = self._plan(request)
        if plan.reply is not None:
            return plan.reply
        response = handler(plan.request)
        return plan.finish(response, self._usage(plan.request, response, tokens))

    async def awrap_model_call(
        self, request: ModelRequest[ContextT], handler: AsyncModelHandler
    ) -> ExtendedModelResponse[Any]:
        plan, tokens = self._plan(request)
        if plan.reply is not None:
            return plan.reply
        response = await handler(plan.request)
        return plan.finish(response, self._usage(plan.request, response, tokens))

    # --- the decision -----------------------------------------------------------------------

    def _plan(self, request: ModelRequest[Any]) -> tuple[Plan, int]:
        """The call to make (closed for the last answer when a cap asks for it), or the
        reply that ends the run because it does not fit."""
        plan = close_if_asked(request)
        state: Any = request.state
        closing: Verdict | None = state.get("tether_closing")
        tokens = self.request_tokens(plan.request)
        verdict = self._check(request.state, closing, tokens)
        if verdict is None:
            return plan, tokens
        if closing is not None or is_closed(plan.request):  # the last answer does not fit
            return Plan(plan.request, reply=stopped(closing or verdict, unasked=True)), tokens
        if not self.settings.cap_answer:
            return Plan(plan.request, reply=stopped(verdict)), tokens
        last = closed(plan.request, verdict)
        tokens = self.request_tokens(last)
        if self._check(request.state, verdict, tokens) is not None:
            return Plan(last, reply=stopped(verdict, unasked=True)), tokens
        return Plan(last, closing=verdict), tokens

    def _check(self, state: Any, closing: Verdict | None, tokens: int) -> Verdict | None:
        view: Any = {"usage": state.get("tether_usage"), "closing": closing}
        return policy.before_call(view, self.settings, prompt_tokens=tokens, cancelled=None)

    # --- counting ---------------------------------------------------------------------------

    def request_tokens(self, request: ModelRequest[Any]) -> int:
        """The request's prompt as tether counts one: each message (tool calls' arguments
        included) and the tool schemas' JSON."""
        messages: list[BaseMessage] = list(request.messages)
        if request.system_message is not None:
            messages.insert(0, request.system_message)
        calls = " ".join(
            _call_text(message) for message in messages if isinstance(message, AIMessage)
        )
        schemas = sum(self._schema_tokens(tool) for tool in request.tools)
        overhead = MESSAGE_OVERHEAD if request.tools else 0
        return (
            count_messages(self.counter, messages) + self.counter.count(calls) + schemas + overhead
        )

    def _schema_tokens(self, tool: BaseTool | dict[str, Any]) -> int:
        cached = self._schemas.get(id(tool))
        if cached is not None and cached[0] is tool:
            return cached[1]
        text = json.dumps(convert_to_openai_tool(tool), ensure_ascii=False)
        tokens = self.counter.count(text)
        self._schemas[id(tool)] = (tool, tokens)
        return tokens

    def _usage(
        self, request: ModelRequest[Any], response: ModelResponse[Any], tokens: int
    ) -> dict[str, Any]:
        """The call counted, and what it spent: the server's usage when it adds up, else
        the prompt's count and the reply's."""
        reply = next((m for m in reversed(response.result) if isinstance(m, AIMessage)), None)
        meta: Any = reply.usage_metadata if reply is not None else None
        values = (
            [meta.get(k) for k in ("input_tokens", "output_tokens", "total_tokens")] if meta else []
        )
        if (
            values
            and all(isinstance(v, int) and v >= 0 for v in values)
            and values[2] == values[0] + values[1] > 0
        ):
            spent: Usage = {
                "input_tokens": values[0],
                "output_tokens": values[1],
                "total_tokens": values[2],
            }
        else:
            written = (
                self.counter.count(reply.text) + self.counter.count(_call_text(reply))
                if reply
                else 0
            )
            spent = {
                "input_tokens": tokens,
                "output_tokens": written,
                "total_tokens": tokens + written,
            }
        state: Any = request.state
        usage = add_usage(state.get("tether_usage"), spent)
        return {**counted(request), "tether_usage": usage}


def _call_text(message: AIMessage) -> str:
    return " ".join(
        f"{c['name']} {json.dumps(c['args'], ensure_ascii=False)}" for c in message.tool_calls
    )
