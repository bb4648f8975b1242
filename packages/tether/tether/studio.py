"""The graph LangGraph Studio and ``langgraph dev`` load (see langgraph.json).

Default settings (``TETHER_*`` variables apply, read here so Studio's settings form shows
the values a run will use), an empty tool registry, and the model built from the settings on
first call, so loading it contacts no server.
"""

from tether.graph.builder import build_graph
from tether.settings import load_settings

graph = build_graph(load_settings())
