"""tether: a controlled tool-calling agent loop."""
