"""The agent loop as a LangGraph StateGraph.

``tether.graph.graph`` is the default graph (registered in langgraph.json for Studio); it is
compiled on first access so importing tether never starts or contacts a model server.
"""

from __future__ import annotations

from typing import Any

from tether.graph.builder import build_graph

__all__ = ["build_graph", "graph"]

_default: Any = None


def __getattr__(name: str) -> Any:
    global _default
    if name == "graph":
        if _default is None:
            _default = build_graph()
        return _default
    raise AttributeError(f"module 'tether.graph' has no attribute {name!r}")
