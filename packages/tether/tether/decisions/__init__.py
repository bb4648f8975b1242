"""Every decision the loop takes, and its routing: pure functions over the state and the settings.

The nodes (tether.nodes) call these; the loop that wires both is tether.graph. What this
package's ``__all__`` lists is public: the stop rules, for the create_agent middleware and
for anyone who adds a rule (docs/architecture.md, "Add a stop rule").
"""

from tether.decisions.stop_rules import STOP_RULES, StopFacts, StopRule, first_stop

__all__ = ["STOP_RULES", "StopFacts", "StopRule", "first_stop"]
