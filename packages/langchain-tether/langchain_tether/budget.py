"""The token budget, checked before each model call: a call that would cross it is not made;
the run ends with an answer asked for within what is left (``cap_answer``), as the loop does.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable
from typing import Any, cast

import tether.decisions as decisions
from langchain.agents.middleware import types as lc
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from tether import AgentSettings
from tether.decisions import Usage, Verdict
from tether.memory import (
    MESSAGE_OVERHEAD,
    TiktokenCounter,
    TokenCounter,
    count_messages,
    tool_call_text,
)

from langchain_tether.calls import ModelCall, model_call
from langchain_tether.closing import Plan, closed, plan_call
from langchain_tether.common import ModelResult, Outcome, Response, RunState, extended, run_view
from langchain_tether.drive import Steps, adrive, drive

Request = lc.ModelRequest[Any]
ModelHandler = Callable[[Request], Response]
AsyncModelHandler = Callable[[Request], Awaitable[Response]]
ModelSteps = Steps[Request, Response, Outcome]
"""A model hook's body (:mod:`langchain_tether.drive`)."""
Made = Callable[[Request], Steps[Request, Response, Response]]
"""How a wrapper's call is made: the request sent on, its response as the wrapper takes it."""


def sent(request: Request) -> Steps[Request, Response, Response]:
    """The request sent to the handler as it is: its response is the one taken."""
    return (yield request)


class KeptCounts:
    """``counter``'s counts, each text counted once (up to 1,024 texts): a run's messages and
    tool calls are in every later request, and counting them all at each call cost 4% of a
    run (3.7 M instructions; benchmarks/middleware_overhead.py --instructions)."""

    def __init__(self, counter: TokenCounter) -> None:
        self.count = functools.lru_cache(maxsize=1024)(counter.count)


class TokenBudget:
    """The token budget, a part of :class:`langchain_tether.TetherMiddleware` and the whole
    of :class:`TokenBudgetMiddleware`: counts each model request (messages and tool schemas,
    with tether's counter) and asks :func:`tether.decisions.before_call` whether it fits the
    run's ``token_budget``, keeping ``max_tokens`` in reserve for a last answer when
    ``cap_answer`` is on. When its prompt does not fit, the call is not made: the model is
    asked, with no tools, for its answer from what is known (if that call fits), and the run
    ends ``partial``. When only the reserve does not fit, the call is made with its reply
    capped at what is left (``max_tokens`` in its model settings): a run that fits is not
    stopped by the reserve; a reply that calls a tool ends the run there (nothing after it
    fits).

    What a call spent is counted here; the server's usage is taken only when it is
    plausible for the prompt and reply counted (:func:`tether.decisions.usage_problem`, the
    loop's rule), so a server that under- or over-reports cannot stretch or end the run.
    Settings: ``token_budget``, ``max_tokens``, ``cap_answer``. ``counter``: any
    :class:`tether.memory.TokenCounter` (tiktoken's cl100k_base, offline, by default).
    """

    settings: AgentSettings

    def __init__(self, settings: AgentSettings | None, counter: TokenCounter | None) -> None:
        self.settings = settings or AgentSettings()
        self.counter = counter or TiktokenCounter()
        self.texts = KeptCounts(self.counter)
        self._schemas: dict[str, tuple[BaseTool, int]] = {}

    def model_steps(self, request: Request) -> ModelSteps:
        """The model hook, for a sync or async handler alike (:mod:`langchain_tether.drive`)."""
        return self.budget_steps(request, sent)

    def wrap_model_call(self, request: Request, handler: ModelHandler) -> ModelResult:
        return extended(drive(self.model_steps(request), handler))

    async def awrap_model_call(self, request: Request, handler: AsyncModelHandler) -> ModelResult:
        return extended(await adrive(self.model_steps(request), handler))

    def budget_steps(self, request: Request, made: Made) -> ModelSteps:
        """The call made within the budget (``made`` makes it), or the stop in its place."""
        with model_call() as call:
            view, update = run_view(request.state, _fresh)
            plan, tokens = self._plan(request, view, call)
            stop = plan.stopped(update)
            if stop is not None:
                return stop
            response = yield from made(plan.request)
            return plan.finish(response, update | self._usage(view, response, tokens, call))

    def _plan(self, request: Request, view: Any, call: ModelCall) -> tuple[Plan, int]:
        """The call to make (its reply capped at what is left when only the reserve for it
        does not fit; closed for the last answer when its prompt does not), or the stop that
        replaces it; the request's tokens."""
        plan = plan_call(request, view.get("tether_stop"), self.settings, call)
        if plan.stop is not None:
            return plan, 0
        spent = self.before(view, call)
        closing = call.closing
        tokens = self.request_tokens(plan.request)
        verdict = self._check(spent, closing, tokens)
        if verdict is None:
            return plan, tokens
        room = self.settings.token_budget - (spent["total_tokens"] if spent else 0) - tokens
        if closing is None and room > 0 and self._check(spent, verdict, tokens) is None:
            capped = {**plan.request.model_settings, "max_tokens": room}
            return Plan(plan.request.override(model_settings=capped), call, capped=verdict), tokens
        if closing is not None:  # the last answer does not fit
            return Plan(plan.request, call, stop=closing, unasked=True), 0
        if not self.settings.cap_answer:
            return Plan(plan.request, call, stop=verdict), 0
        last = closed(plan.request, verdict, call)
        tokens = self.request_tokens(last)
        if self._check(spent, verdict, tokens) is not None:
            call.closing = None
            return Plan(last, call, stop=verdict, unasked=True), 0
        return Plan(last, call, closing=verdict), tokens

    def _check(self, spent: Usage | None, closing: Verdict | None, tokens: int) -> Verdict | None:
        view: Any = {"usage": spent, "closing": closing}
        return decisions.before_call(view, self.settings, prompt_tokens=tokens, cancelled=None)

    def request_tokens(self, request: Request) -> int:
        """The request's prompt as tether counts one: each message (tool calls' arguments
        included), the system message and the tool schemas' JSON."""
        messages: list[BaseMessage] = list(request.messages)
        if request.system_message is not None:
            messages.insert(0, request.system_message)
        calls = [self.texts.count(tool_call_text(m)) for m in messages if isinstance(m, AIMessage)]
        schemas = sum(self.schema_tokens(tool) for tool in request.tools)
        overhead = MESSAGE_OVERHEAD if request.tools else 0
        return count_messages(self.texts, messages) + sum(calls) + schemas + overhead

    def schema_tokens(self, tool: BaseTool | dict[str, Any]) -> int:
        """The tokens of the tool's schema as the model is sent it (OpenAI's JSON), counted
        once per tool this budget is offered (the tools a run offers do not change between
        its calls): counting them at each call cost 11% of a run (10.2 M instructions)."""
        if not isinstance(tool, BaseTool):
            return self.counter.count(schema_text(tool))
        kept = self._schemas.get(tool.name)
        if kept is None or kept[0] is not tool:
            kept = self._schemas[tool.name] = (tool, self.counter.count(schema_text(tool)))
        return kept[1]

    def _usage(self, view: Any, response: Response, tokens: int, call: ModelCall) -> dict[str, Any]:
        """The run's usage after the call. A reply a tether wrapper inside wrote in place of
        the model's spent nothing."""
        spent = self.before(view, call)
        replies = [m for m in response.result if isinstance(m, AIMessage)]
        if not call.answered:
            for reply in replies:
                spent = decisions.add_usage(spent, self.spent(reply, tokens))
        call.spent, call.budgeted = spent, True
        return {"tether_usage": spent} if spent is not None else {}

    def before(self, view: Any, call: ModelCall) -> Usage | None:
        """What the run spent before this pass: the state's usage, or what the budget's last
        pass in this call left (an answer the final-answer check sent back)."""
        return call.spent if call.budgeted else view.get("tether_usage")

    def spent(self, reply: AIMessage, prompt: int) -> Usage:
        """What one call spent: the server's usage when it is plausible, else the count."""
        written = self.texts.count(reply.text) + self.texts.count(tool_call_text(reply))
        meta: Any = reply.usage_metadata
        if decisions.usage_problem(meta, (prompt, written), self.settings.max_tokens) is None:
            return cast(Usage, {key: meta[key] for key in Usage.__annotations__})
        return {"input_tokens": prompt, "output_tokens": written, "total_tokens": prompt + written}


class TokenBudgetMiddleware(
    TokenBudget, lc.AgentMiddleware[RunState[lc.ResponseT], lc.ContextT, lc.ResponseT]
):
    """The token budget (:class:`TokenBudget`) on its own, for an agent that wants it
    without tether's other controls (:func:`langchain_tether.tether_middleware` puts it in
    :class:`langchain_tether.TetherMiddleware`).

    Hooks: ``wrap_model_call`` (no graph node of its own). State: the run's usage
    (private), ``tether_status``, ``tether_cause`` and ``tether_reason``.
    """

    state_schema = RunState  # type: ignore[assignment]

    def __init__(
        self, settings: AgentSettings | None = None, *, counter: TokenCounter | None = None
    ) -> None:
        lc.AgentMiddleware.__init__(self)
        TokenBudget.__init__(self, settings, counter)


def _fresh(state: Any) -> dict[str, Any]:
    """The budget's field as a run starts."""
    return {"tether_usage": None}


def schema_text(tool: BaseTool | dict[str, Any]) -> str:
    """The tool's schema as the model is sent it (OpenAI's JSON)."""
    return json.dumps(convert_to_openai_tool(tool), ensure_ascii=False)
