"""The graph LangGraph Studio and ``langgraph dev`` load (see langgraph.json).

Default settings (``TETHER_*`` variables apply), an empty tool registry, and the model built
from the settings on first call, so loading it contacts no server.
"""

from tether.graph.builder import build_graph

graph = build_graph()
