"""The loop with the demo world's tools, for LangGraph Studio (``langgraph.json``: tether-world).

Payments and cancellations pause for approval here, so Studio shows tether's interrupts.
The world lives in the data directory (``$TETHER_DATA_DIR`` or ``./data``).
"""

from tether.graph.builder import build_graph
from tether.world.world import World

graph = build_graph(registry=World.create().registry())
