"""The orders tether's middleware hold in, checked when the agent is built.

Some of LangChain's own middleware cannot be placed just anywhere around tether's: in the
wrong place they end a run, or retry a call, where tether's wrappers cannot see it, and a
write's unknown outcome or the run's status is lost. :func:`check_order` refuses such a
list with one line that says where each goes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import langchain.agents as agents
from langchain.agents.middleware import (
    AgentMiddleware,
    ModelCallLimitMiddleware,
    ModelRetryMiddleware,
    ToolRetryMiddleware,
)
from langgraph.graph.state import CompiledStateGraph

from langchain_tether.budget import TokenBudgetMiddleware
from langchain_tether.repeat import RepeatGuardMiddleware
from langchain_tether.steps import TetherMiddleware

M = TypeVar("M", bound=Sequence[AgentMiddleware[Any, Any, Any]])
BUDGETS = (TetherMiddleware, TokenBudgetMiddleware)
"""The middleware that check the token budget (a model retry goes inside every one)."""


def check_order(middleware: M) -> M:
    """``middleware`` (the list given to ``create_agent``) as it is, when every order it puts
    tether's middleware in holds; else a ValueError naming the first that does not:

    - ``RepeatGuardMiddleware`` without :class:`~langchain_tether.TetherMiddleware` before
      it: that runs the guard's model side (a run's start, the stop it leaves pending).
    - ``ModelCallLimitMiddleware``: it ends the run from a hook of its own, before tether
      can replay a write of unknown outcome or write the run's status; tether's step cap
      (``AgentSettings.max_steps``) does its job.
    - ``ToolRetryMiddleware`` after the repeat guard: it would retry a write blind (and a
      write's unknown outcome would be lost); it goes before it (``retries=``).
    - ``ModelRetryMiddleware`` before a middleware that checks the token budget
      (:class:`~langchain_tether.TetherMiddleware`, ``TokenBudgetMiddleware``): a model
      failure at a cap would lose the run's status; it goes after them.
    """
    guards = [at for at, part in enumerate(middleware) if isinstance(part, RepeatGuardMiddleware)]
    if guards and not any(isinstance(p, TetherMiddleware) for p in middleware[: guards[0]]):
        raise ValueError("RepeatGuardMiddleware goes after TetherMiddleware, never without it")
    budgets = [at for at, part in enumerate(middleware) if isinstance(part, BUDGETS)]
    if not budgets:  # none of tether's (the guard alone was refused above)
        return middleware
    for at, part in enumerate(middleware):
        if isinstance(part, ModelCallLimitMiddleware):
            raise ValueError(
                "ModelCallLimitMiddleware cannot be used with tether's middleware: it ends a "
                "run tether cannot close; set AgentSettings.max_steps instead"
            )
        if isinstance(part, ToolRetryMiddleware) and guards and at > guards[0]:
            raise ValueError(
                "ToolRetryMiddleware goes before RepeatGuardMiddleware "
                "(tether_middleware(retries=[...])), never after it: it would retry a write blind"
            )
        if isinstance(part, ModelRetryMiddleware) and at < budgets[-1]:
            raise ValueError(
                "ModelRetryMiddleware goes after TetherMiddleware and TokenBudgetMiddleware "
                "(tether_middleware(retries=[...]) or later), never before: a model failure at "
                "a cap would lose the run's status"
            )
    return middleware


def create_agent(
    *args: Any, middleware: Sequence[AgentMiddleware[Any, Any, Any]] = (), **options: Any
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """LangChain's :func:`langchain.agents.create_agent`, the same arguments, with
    ``middleware`` checked first (:func:`check_order`): an order that cannot hold is refused
    when the agent is built, with one line that says where each goes."""
    return agents.create_agent(*args, middleware=check_order(middleware), **options)
