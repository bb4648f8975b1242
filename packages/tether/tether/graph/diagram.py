"""The loop's structure as Mermaid, generated from the compiled graph."""

from __future__ import annotations

from tether.graph.builder import build_graph
from tether.settings import AgentSettings


def mermaid() -> str:
    """Mermaid source for the graph (built with defaults; structure does not depend on them)."""
    return build_graph(AgentSettings()).get_graph().draw_mermaid()
