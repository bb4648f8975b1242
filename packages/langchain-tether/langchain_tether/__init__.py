"""tether's controls as LangChain v1 middleware, for agents built with ``create_agent``.

Each middleware runs the loop's own decision functions (:mod:`tether.decisions`): the token
budget checked before the call, the repeat guard, the circuit breaker and its note, calm
temperature, the final-answer check, and writes that are never run twice or retried blind.
Install with ``pip install langchain-tether``. See docs/middleware.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.tools import BaseTool
from tether.memory.tokens import TokenCounter
from tether.settings import AgentSettings

from langchain_tether.budget import TokenBudgetMiddleware
from langchain_tether.common import TetherPart, TetherState, answer_of, tether_part
from langchain_tether.composed import TetherMiddleware
from langchain_tether.final import FinalAnswerCheckMiddleware
from langchain_tether.repeat import RepeatGuardMiddleware
from langchain_tether.stats import ToolStatsMiddleware
from langchain_tether.steps import (
    CalmTemperatureMiddleware,
    CircuitBreakerMiddleware,
)

__all__ = [
    "CalmTemperatureMiddleware",
    "CircuitBreakerMiddleware",
    "FinalAnswerCheckMiddleware",
    "RepeatGuardMiddleware",
    "TetherMiddleware",
    "TetherPart",
    "TetherState",
    "TokenBudgetMiddleware",
    "ToolStatsMiddleware",
    "answer_of",
    "tether_middleware",
    "tether_part",
]


def tether_middleware(
    settings: AgentSettings | None = None,
    *,
    tools: Sequence[BaseTool] | None = None,
    counter: TokenCounter | None = None,
    retries: Sequence[AgentMiddleware[Any, Any, Any]] = (),
) -> list[AgentMiddleware[Any, Any, Any]]:
    """Every tether middleware, in the order they compose (the first is the outermost):

    1. :class:`CircuitBreakerMiddleware`, 2. :class:`CalmTemperatureMiddleware`,
    3. :class:`FinalAnswerCheckMiddleware`, 4. :class:`ToolStatsMiddleware`: outside any
       retry, so a call retried in place is one step and its exhausted retries one failure;
    5. :class:`TokenBudgetMiddleware`: inside the model-call wrappers that add notes or set
       the temperature, so it counts the request as sent;
    6. ``retries``: LangChain's ``ToolRetryMiddleware`` (or ``ToolErrorMiddleware``), placed
       here so that
    7. :class:`RepeatGuardMiddleware`, innermost, answers a write's failure with a result
       before any retry sees it: a write is never retried blind (a transient failure is
       replayed in place with the same arguments, within ``tool_attempts``).

    They come composed in one :class:`TetherMiddleware` (``create_agent`` adds a tracing
    span around each middleware's hooks on every call, which would cost more than the
    controls); with ``retries``, the repeat guard follows them in a layer of its own.

    ``settings``: tether's :class:`~tether.AgentSettings` (the defaults when unset); ``tools``:
    the agent's tools, for the final-answer check (else it learns them from the requests);
    ``counter``: the budget's token counter (tiktoken offline by default). LangChain's
    ``HumanInTheLoopMiddleware`` goes before all of these, so the calls tether sees are the
    ones the operator approved or edited.
    """
    settings = settings if settings is not None else AgentSettings()
    outer: list[AgentMiddleware[Any, Any, Any]] = [
        CircuitBreakerMiddleware(settings),
        CalmTemperatureMiddleware(settings),
        FinalAnswerCheckMiddleware(settings, tools=tools),
        ToolStatsMiddleware(),
        TokenBudgetMiddleware(settings, counter=counter),
    ]
    guard = RepeatGuardMiddleware(settings)
    if not retries:
        return [TetherMiddleware([*outer, guard])]
    return [TetherMiddleware(outer), *retries, guard]
