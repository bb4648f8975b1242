"""A conditional edge as a Runnable with a native async path."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from langchain_core.callbacks import BaseCallbackManager
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import (
    ensure_config,
    get_async_callback_manager_for_config,
    get_callback_manager_for_config,
)

from tether.state import RouteView


class Edge(Runnable[RouteView, str]):
    """A conditional edge, traced as a run of its own as LangGraph traces a plain function,
    with a native async path: LangGraph runs a sync-only edge of an async run in a worker
    thread, a hop per step for a function that only reads the state.

    It wraps ``path`` (and is callable) so LangGraph reads its input type as for a plain
    function: the edge is given the fresh state, not the node's update laid over it."""

    def __init__(self, name: str, path: Callable[[RouteView], str]) -> None:
        functools.update_wrapper(self, path)
        self.name = name
        self.path = path

    def __call__(self, state: RouteView) -> str:
        return self.path(state)

    def invoke(self, input: RouteView, config: RunnableConfig | None = None, **_: Any) -> str:
        config = ensure_config(config)
        if not _heard(config):
            return self.path(input)
        run = get_callback_manager_for_config(config).on_chain_start(
            None, input, name=config.get("run_name") or self.name, run_id=config.pop("run_id", None)
        )
        try:
            label = self.path(input)
        except BaseException as exc:
            run.on_chain_error(exc)
            raise
        run.on_chain_end(label)
        return label

    async def ainvoke(
        self, input: RouteView, config: RunnableConfig | None = None, **_: Any
    ) -> str:
        config = ensure_config(config)
        if not _heard(config):
            return self.path(input)
        run = await get_async_callback_manager_for_config(config).on_chain_start(
            None, input, name=config.get("run_name") or self.name, run_id=config.pop("run_id", None)
        )
        try:
            label = self.path(input)
        except BaseException as exc:
            await run.on_chain_error(exc)
            raise
        await run.on_chain_end(label)
        return label


def _heard(config: RunnableConfig) -> bool:
    """Whether a callback handler could see the edge's run. Inside a graph run the config
    carries the callback manager the edge inherits, and LangGraph traces an edge with that
    manager as it is (no fresh configure): with no handler in it, the run is seen by
    nothing, and setting it up (metadata merged per call) is work for no one. Anything else
    (no manager, e.g. called outside a run) takes the traced path."""
    callbacks = config.get("callbacks")
    return not isinstance(callbacks, BaseCallbackManager) or bool(callbacks.handlers)
