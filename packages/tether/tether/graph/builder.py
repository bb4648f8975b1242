"""Assemble the loop: nodes do the work, routing functions pick the edges.

A step is two nodes: ``think`` (prompt, budget check, model call, parse) and ``act`` (run the
tool, judge the result). ``approve`` and ``refuse`` stand between them when a call needs an
operator, has failed twice, or was just rejected. This is the one place that knows both the
nodes and the routes, so :mod:`tether.decisions` (the decisions) never imports the nodes.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, get_args, get_type_hints

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore

from tether.control.approval import keeping_answers
from tether.decisions import routing
from tether.decisions.rules import DEFAULT_RULES, Rule
from tether.memory.tokens import TokenCounter
from tether.nodes.act import Act
from tether.nodes.approve import Approve
from tether.nodes.deps import Deps
from tether.nodes.refuse import Refuse
from tether.nodes.start import Start
from tether.nodes.think import Think
from tether.settings import (
    AgentSettings,
    RunSettings,
    check_tool_names,
    load_settings,
    run_settings_schema,
)
from tether.state import AgentState, InputState, RouteView
from tether.tools.registry import ToolRegistry, as_registry

if TYPE_CHECKING:
    from tether.control.cancel import CancelStore
    from tether.control.trace_log import SqlTraceLog


def build_graph(
    settings: AgentSettings | dict[str, Any] | None = None,
    *,
    model: BaseChatModel | None = None,
    registry: ToolRegistry | Iterable[Any] | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    rules: Sequence[Rule] = (),
    counter: TokenCounter | None = None,
    sleep: Callable[[float], None] = time.sleep,
    asleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    seed: int | None = None,
    cancel_store: CancelStore | None = None,
    trace_log: SqlTraceLog | None = None,
    store: BaseStore | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile tether's agent loop.

    ``model`` defaults to ChatOpenAI at the configured endpoint (or the embedded model),
    built on first use, so compiling contacts no server. ``rules`` run after the built-in
    ones (low confidence). ``sleep``/``asleep`` are what backoff waits with in sync/async
    runs (tests pass recorders); ``seed`` fixes the backoff jitter. ``cancel_store`` lets
    another process stop a run between steps, and each node saves its events to ``trace_log``
    before it returns (see tether.control). ``store`` (LangGraph's; a server passes its own)
    keeps tool health shared by every run that uses it (tether.nodes.health).
    """
    if isinstance(settings, dict):
        settings = load_settings(**settings)
    registry = as_registry(registry)
    if settings is not None and len(registry):  # else checked at the first step
        check_tool_names(settings, registry.names())
    deps = Deps(
        settings=settings,
        registry=registry,
        counter=counter,
        rules=(*DEFAULT_RULES, *rules),
        model=model,
        sleep=sleep,
        asleep=asleep,
        rng=random.Random(seed),
        cancel_store=cancel_store,
        trace_log=trace_log,
    )
    context = run_settings_schema(settings) if settings is not None else RunSettings
    builder = StateGraph(AgentState, context_schema=context, input_schema=InputState)
    builder.add_node("start", Start(deps))
    builder.add_node("think", Think(deps))
    builder.add_node("act", Act(deps))
    builder.add_node("approve", Approve(deps))
    builder.add_node("refuse", Refuse(deps))
    builder.add_edge(START, "start")
    builder.add_edge("start", "think")
    _route(builder, "think", routing.route_after_think)
    _route(builder, "approve", routing.route_after_approve)
    _route(builder, "act", routing.route_after_act)
    _route(builder, "refuse", routing.route_after_refuse)
    graph = builder.compile(checkpointer=checkpointer, store=store, name="tether")
    graph.checkpointer = keeping_answers(graph.checkpointer)  # compiling may have copied it
    return graph


def _route(
    builder: StateGraph[Any, Any, Any, Any], source: str, router: Callable[[RouteView], str]
) -> None:
    """Wire a pure router as a conditional edge to its declared targets, each edge named by
    its label so diagrams say why it is taken. The edge is a plain function, traced under
    the router's name; LangGraph runs it in a worker thread in an async run (under 1 ms a
    step, far below a model's)."""
    targets = list(get_args(get_type_hints(router)["return"]))
    labels = {target: routing.EDGE_LABELS[(source, target)] for target in targets}

    def path(state: RouteView) -> str:  # its type is the keys LangGraph gives the edge
        return labels[router(state)]

    path.__name__ = path.__qualname__ = router.__name__
    builder.add_conditional_edges(source, path, {labels[t]: t for t in targets})
