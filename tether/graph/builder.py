"""Assemble the loop: nodes do the work, routing functions pick the edges."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import Any, get_args, get_type_hints

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from tether.control.cancel import CancelStore
from tether.graph import routing
from tether.graph.rules import DEFAULT_RULES, Rule
from tether.graph.state import AgentState, InputState
from tether.memory.tokens import TokenCounter
from tether.nodes.act import make_act
from tether.nodes.approve import make_approve
from tether.nodes.assess import make_assess
from tether.nodes.compose import make_compose
from tether.nodes.deps import Deps
from tether.nodes.finish import finish
from tether.nodes.refuse import refuse
from tether.nodes.start import make_start
from tether.nodes.think import make_think
from tether.settings import AgentSettings, RunSettings
from tether.tools.registry import ToolRegistry


def build_graph(
    settings: AgentSettings | None = None,
    *,
    model: BaseChatModel | None = None,
    registry: ToolRegistry | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    rules: Sequence[Rule] = (),
    counter: TokenCounter | None = None,
    sleep: Callable[[float], None] = time.sleep,
    seed: int | None = None,
    cancel_store: CancelStore | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile tether's agent loop.

    ``model`` defaults to ChatOpenAI at the configured endpoint, built on first use.
    ``rules`` run after the built-in ones (low confidence). ``sleep`` is what backoff waits
    with (tests pass a recorder); ``seed`` fixes the backoff jitter. ``cancel_store`` lets
    another process stop a run between steps (see tether.control).
    """
    deps = Deps(
        settings=settings,
        registry=registry if registry is not None else ToolRegistry(),
        counter=counter,
        rules=(*DEFAULT_RULES, *rules),
        model=model,
        sleep=sleep,
        rng=random.Random(seed),
        cancel_store=cancel_store,
    )
    builder = StateGraph(AgentState, context_schema=RunSettings, input_schema=InputState)
    builder.add_node("start", make_start(deps))
    builder.add_node("compose", make_compose(deps))
    builder.add_node("think", make_think(deps))
    builder.add_node("act", make_act(deps))
    builder.add_node("approve", make_approve(deps))
    builder.add_node("refuse", refuse)
    builder.add_node("assess", make_assess(deps))
    builder.add_node("finish", finish)

    builder.add_edge(START, "start")
    builder.add_edge("start", "compose")
    _route(builder, deps, "compose", routing.route_after_compose)
    _route(builder, deps, "think", routing.route_after_think)
    _route(builder, deps, "approve", routing.route_after_approve)
    _route(builder, deps, "act", routing.route_after_act)
    builder.add_edge("refuse", "assess")
    _route(builder, deps, "assess", routing.route_after_assess)
    builder.add_edge("finish", END)
    return builder.compile(checkpointer=checkpointer, name="tether")


def _route(
    builder: StateGraph[Any, Any, Any, Any],
    deps: Deps,
    source: str,
    router: Callable[[AgentState, AgentSettings], str],
) -> None:
    """Wire a pure (state, settings) router as a conditional edge to its declared targets,
    each edge named by its label so diagrams say why it is taken."""
    targets = list(get_args(get_type_hints(router)["return"]))
    labels = {target: routing.EDGE_LABELS[(source, target)] for target in targets}

    def path(state: AgentState, runtime: Runtime[Any]) -> str:
        return labels[router(state, deps.settings_for(runtime))]

    path.__name__ = router.__name__
    builder.add_conditional_edges(source, path, {labels[t]: t for t in targets})
