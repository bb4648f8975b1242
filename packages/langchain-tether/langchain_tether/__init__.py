"""tether's controls as LangChain v1 middleware, for agents built with ``create_agent``.

Each middleware runs the loop's own decision functions (:mod:`tether.decisions`): the stop
rules (:func:`tether.decisions.first_stop`), the token budget checked before the call, the
repeat guard, the circuit breaker's note, calm temperature, the final-answer check, and
writes that are never run twice or retried blind. Install with ``pip install
langchain-tether``. See docs/middleware.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, NoReturn

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool
from tether import AgentSettings
from tether.memory import TokenCounter

from langchain_tether.budget import TokenBudgetMiddleware
from langchain_tether.closing import STOP_ID
from langchain_tether.common import NOTE_ID
from langchain_tether.order import check_order, create_agent
from langchain_tether.repeat import RepeatGuardMiddleware
from langchain_tether.steps import TetherMiddleware, TetherState

__all__ = [
    "RepeatGuardMiddleware",
    "TetherMiddleware",
    "TetherPart",
    "TetherState",
    "TokenBudgetMiddleware",
    "answer_of",
    "check_order",
    "create_agent",
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

    1. :class:`TetherMiddleware` (the stop rules, calm temperature, the final-answer check,
    tool stats and the token budget): outside any retry, so a call retried in place is one
    step and its exhausted retries one failure; 2. ``retries``: LangChain's
    ``ToolRetryMiddleware`` (or ``ToolErrorMiddleware``) and ``ModelRetryMiddleware``,
    placed here so that 3. :class:`RepeatGuardMiddleware`, innermost, answers a write's
    failure with a result before any retry sees it: a write is never retried blind.

    ``settings``: tether's :class:`~tether.AgentSettings` (the defaults when unset);
    ``tools``: the agent's tools, for the final-answer check (else it learns them from the
    requests); ``counter``: the budget's token counter (tiktoken offline by default).
    LangChain's ``HumanInTheLoopMiddleware`` goes before all of these; pass the whole list
    to :func:`check_order` to have an order that cannot hold refused.
    """
    settings = settings if settings is not None else AgentSettings()
    middleware: list[AgentMiddleware[Any, Any, Any]] = [
        TetherMiddleware(settings, tools=tools, counter=counter),
        *retries,
        RepeatGuardMiddleware(settings),
    ]
    return check_order(_Unpacked(middleware))


class _Unpacked(list[AgentMiddleware[Any, Any, Any]]):
    """:func:`tether_middleware`'s list, which goes unpacked into the agent's. Given whole,
    as one middleware, ``create_agent`` reads its ``tools`` first: they say so."""

    @property
    def tools(self) -> NoReturn:
        raise TypeError("unpack tether_middleware's list: middleware=[*tether_middleware(...)]")


TetherPart = Literal["note", "cap_note", "stop", "recall", "refuse", "repeat"]
"""What tether wrote a message as (:func:`tether_part`)."""


def tether_part(message: BaseMessage) -> TetherPart | None:
    """What tether wrote ``message`` as, for those who read a run's messages afterwards (a
    trace viewer, ``tether replay``): a note to the model (the cap's own), the run's closing
    message, or a ToolMessage in place of a call's run; None for any other message. Nothing
    tether decides reads this: its control facts live in its state."""
    ident = str(message.id or "")
    if isinstance(message, ToolMessage):
        gate = message.additional_kwargs.get("tether")
        return gate if gate in ("recall", "refuse", "repeat") else None
    if ident.startswith(NOTE_ID):
        cap = ident == f"{NOTE_ID}cap"
        return "cap_note" if cap else "stop" if ident.startswith(STOP_ID) else "note"
    return None


def answer_of(state: Mapping[str, Any]) -> str | None:
    """The run's answer, for a reader of its output: the text of its last message, when the
    model wrote it (an answer tether asked for at a cap included); None when the run ended
    without one (tether's stop message, or a last message that is not an answer)."""
    messages = state.get("messages") or []
    last = messages[-1] if messages else None
    if not isinstance(last, AIMessage) or last.tool_calls or str(last.id).startswith(STOP_ID):
        return None
    return last.text or None
