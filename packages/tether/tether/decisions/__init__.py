"""Every decision the loop takes, and its routing: pure functions over the state and the settings.

The nodes (tether.nodes) call these; the loop that wires both is tether.graph.
"""
