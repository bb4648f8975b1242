"""tether's vocabulary: statuses (with their meaning and exit code), stop causes, step kinds,
gates, trace events and moves, each listed once.

A leaf module, like :mod:`tether.state`, which re-exports every name.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Literal, NamedTuple, get_args

# --- the vocabulary ---------------------------------------------------------------------------

Status = Literal[
    "running", "completed", "partial", "failed", "max_steps", "no_progress", "cancelled"
]
"""``running`` until the run ends; every other value ends it. :data:`STATUSES` says what each
one means."""


class StatusInfo(NamedTuple):
    """What a status means, to people and to scripts."""

    status: Status
    meaning: str
    """One line, for people: what the console prints and the README's table says."""
    exit_code: int
    """``tether run``'s exit code for a run left with this status: 0 completed, 1 stopped
    without an answer, 3 not ended (saved, waiting); 2, an error, is no status's code."""


_STATUS_TABLE: dict[Status, tuple[str, int]] = {  # status: (meaning, exit code)
    "running": ("not ended yet: working, or saved and waiting (for an approval, or a resume)", 3),
    "completed": ("the model gave a final answer (tether does not check that it is right)", 0),
    "partial": ("stopped by the token budget before a final answer, or a rule said so", 1),
    "failed": ("stopped: failed steps in a row, a rule, or an answer stating nothing found", 1),
    "max_steps": ("stopped by the step cap before a final answer", 1),
    "no_progress": ("stopped: the model kept repeating itself, or a rule said so", 1),
    "cancelled": ("stopped on an operator's request", 1),
}
STATUSES: Mapping[str, StatusInfo] = MappingProxyType(
    {status: StatusInfo(status, *row) for status, row in _STATUS_TABLE.items()}
)
"""Every status, in :data:`Status`'s order: the one table the console, the CLI's exit codes,
the benchmark and the README's table are checked against (tests/test_loop_statuses.py).
Keyed by plain ``str``, so a status read back from a saved run can be looked up as it is
(``STATUSES.get(value)`` is None for one this tether does not have)."""

StopCause = Literal[
    "answer",
    "cancel",
    "step_cap",
    "budget",
    "breaker",
    "tool_failures",
    "repeat",
    "same_reply",
    "rule",
    "unsettled",
    "unbacked",
]
"""What ended a run, beside its status (each cause's meaning is in :data:`CAUSES`): one cause
per stop rule, so a new rule that ends ``failed`` is not told to the model as the breaker. The
model's note at a cap, the console and the benchmark key on the cause."""

CAUSES: Mapping[str, str] = MappingProxyType(
    {
        "answer": "the model gave its final answer",
        "cancel": "an operator asked the run to stop",
        "step_cap": "the step cap is reached (max_steps model calls)",
        "budget": "the token budget is nearly spent (token_budget)",
        "breaker": "too many steps failed in a row (the circuit breaker)",
        "tool_failures": "one tool failed too many times in this run (max_tool_failures)",
        "repeat": "a call was proposed again after the note said that ends the run",
        "same_reply": "the same unusable reply came three times in a row",
        "rule": "a rule said stop",
        "unsettled": "a final answer came while a side effect's outcome was unknown",
        "unbacked": "the final answer states nothing this run's tool results hold",
    }
)
"""What each :data:`StopCause` means, in tether's words: the console prints it, and the
model's last note at a cap says it (:func:`tether.decisions.notes.cap_note`)."""

TERMINAL_STATUSES: frozenset[str] = frozenset(get_args(Status)) - {"running"}

FailureKind = Literal[
    "tool_error",  # the tool ran (or was called) and failed
    "validation_error",  # the arguments did not match the tool's schema
    "unknown_tool",  # no tool of that name is registered
    "transient",  # a timeout, rate limit or 5xx still failing after the retries
    "refused",  # the loop would not run a call that failed twice or was just rejected
    "rejected",  # the operator rejected the call at an approval gate
    "parse_failure",  # the reply could not be read as an action or a final answer
    "rule_failure",  # a rule judged a successful result a failure
]
StepKind = Literal["success", "final", "repeat", "recall", "sent_back"] | FailureKind
"""Besides successes and failures: ``recall`` (a call that succeeded before, answered from its
record), ``sent_back`` (an answer returned once by the check), ``repeat`` (ends the run)."""
FAILURE_KINDS: frozenset[str] = frozenset(get_args(FailureKind))

TOOL_ERROR_TYPES: frozenset[str] = frozenset(
    {"tool_error", "validation_error", "unknown_tool", "transient"}
)
"""What a tool call itself can fail with; "refused" and "rejected" are the loop's own."""

Gate = Literal["run", "approve", "refuse", "recall", "repeat"]
"""What the loop does with a proposed call: run it, ask first, refuse it, answer it from the
record of its earlier success (with a note, not run), or end on a repeat."""

TraceEventName = Literal[
    "start",  # the run began (step 0): task
    "model_call",  # a model call and its parsed reply: usage, temperature, tools offered and
    # withheld, kind (action/final/invalid), thought, tool, arguments, answer, error, gate, raw
    "usage_counted",  # the server reported no usable usage, so it was counted locally: note
    "memory_trimmed",  # the prompt was cut to fit memory_budget: what was dropped or cut
    "tool_call",  # one attempt of a tool call: tool, arguments, attempt, backoff, status,
    # observation, meta, and a rule's verdict on the result
    "approval",  # the operator's answer at an approval gate: action (approve/edit/reject)
    "refused",  # a call not run (failed twice, just rejected, not allowed at the step): why
    "resolve",  # the run would end, but a side-effecting call's outcome is unknown (it failed
    # transiently): the loop replays it once first: tool, arguments
    "decision",  # how a step was judged (step_kind, decision, reason, streaks, hints), or,
    # with ``stop``, the verdict that stops the run before a model call
    "finish",  # the run ended: status, reason, usage
]
"""The events of the trace (:class:`TraceEvent`), each with what its ``detail`` holds."""

NextMove = Literal["think", "act", "approve", "refuse", "end"]
"""Where the graph goes after a node, as that node recorded it: ``think`` (ask the model),
``act`` (run the call in flight: a first run, a retry in place, or the replay of a call whose
outcome is unknown), ``approve`` (ask the operator first), ``refuse`` (answer the call without
running it), ``end`` (the run has its status). The conditional edges read only this."""
