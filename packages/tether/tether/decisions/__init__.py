"""Every decision the loop takes, and its routing: pure functions over the state and the settings.

The nodes (tether.nodes) call these; the loop that wires both is tether.graph. What this
package's ``__all__`` lists is public: the stop rules and the decisions the create_agent
middleware takes as the loop does (re-exported as they are), the state types they read, and
what a model profile (tether-local's small-model profile) implements and builds on.
"""

# isort: skip_file
from tether.decisions.final_check import changes_asked, check_final, first_lookup, record_result
from tether.decisions.notes import cap_ending, cap_note, plain_values
from tether.decisions.policy import NOT_AN_OUTCOME, GateDecision, backoff_delay, before_call
from tether.decisions.policy import call_events, classify, gate, history_window, stale_records
from tether.decisions.policy import usage_problem, wants_retry
from tether.decisions.offer import Offer
from tether.decisions.profile import Grounded, ModelProfile
from tether.decisions.replies import asks_user, declines, negated
from tether.decisions.side_effects import must_resolve_first, settled_verdict, unresolved_after
from tether.decisions.side_effects import unknown_outcome_note
from tether.decisions.stop_rules import STOP_RULES, StopFacts, StopRule, first_stop, streak
from tether.decisions.stops import hints_after, recall_hint, switch_hint, temperature_for
from tether.decisions.toolpick import select_tools, terms
from tether.state import AgentState, CallEvent, CallRecord, Proposal
from tether.state import StepRecord, ToolResult, Usage, Verdict, add_usage, call_key
from tether.state import keep_window, record_calls, windowed
from tether.tools.envelope import LOOP_ORIGIN
from tether.tools.failures import describe, is_transient
from tether.vocabulary import FAILURE_KINDS, TOOL_ERROR_TYPES

__all__ = [  # noqa: RUF022 (grouped by the module each name comes from)
    "changes_asked", "check_final", "first_lookup", "record_result", "cap_ending", "cap_note",
    "plain_values", "NOT_AN_OUTCOME", "GateDecision", "backoff_delay", "before_call",
    "call_events", "classify", "gate", "history_window", "stale_records", "usage_problem",
    "wants_retry", "Offer", "Grounded", "ModelProfile", "asks_user", "declines", "negated",
    "must_resolve_first", "settled_verdict", "unresolved_after", "unknown_outcome_note",
    "STOP_RULES", "StopFacts", "StopRule", "first_stop", "streak", "hints_after", "recall_hint",
    "switch_hint", "temperature_for", "select_tools", "terms", "FAILURE_KINDS",
    "TOOL_ERROR_TYPES", "AgentState", "CallEvent", "CallRecord", "Proposal", "StepRecord",
    "ToolResult", "Usage", "Verdict", "add_usage", "call_key", "keep_window", "record_calls",
    "windowed", "LOOP_ORIGIN", "describe", "is_transient",
]  # fmt: skip
