"""The agent loop as a LangGraph StateGraph.

``graph`` is the default graph (registered in langgraph.json for LangGraph Studio): default
settings, an empty tool registry, and the model built from the settings on first call, so
compiling it contacts no server.
"""

from tether.graph.builder import build_graph

graph = build_graph()

__all__ = ["build_graph", "graph"]
