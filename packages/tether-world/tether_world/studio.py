"""The loop with the demo world's tools, for LangGraph Studio (``langgraph.json``: tether-world).

Payments and cancellations pause for approval here, so Studio shows tether's interrupts.
The world lives in the data directory (``$TETHER_DATA_DIR`` or ``./data``). ``graph`` is a
graph factory (LangGraph's server calls it with the run's config), so importing this module
opens no database: the world is opened at the server's first request, once, in a thread (a
server's event loop must not wait on a database).

The graph is compiled without a checkpointer or a store: LangGraph's Agent Server (``langgraph
dev``, or a deployment) runs it with its own, so approvals pause in the server's checkpointer and
tool health is shared through the server's store by every run it serves.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from langchain_core.runnables import RunnableConfig
from tether import build_graph, load_settings


@functools.cache
def _compiled() -> Any:
    from tether_world.world import World

    return build_graph(load_settings(), registry=World.create().registry())


async def graph(config: RunnableConfig) -> Any:
    """The tether-world graph (built once, at the first request)."""
    return await asyncio.to_thread(_compiled)
