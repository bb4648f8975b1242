"""The agent's state: the task, both memory buffers, every counter and the outcome.

Everything the loop decides from is here, so a checkpoint is a complete picture of a run and
routing functions can be pure functions of it.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal, NotRequired, TypedDict, get_args

from langchain_core.messages import BaseMessage

from tether.memory.buffers import ReasoningEntry, ToolResultEntry, keep_window

Status = Literal[
    "running", "completed", "partial", "failed", "max_steps", "no_progress", "cancelled"
]
FailureKind = Literal[
    "tool_error",
    "validation_error",
    "unknown_tool",
    "transient",
    "refused",
    "rejected",
    "parse_failure",
    "rule_failure",
]
StepKind = Literal["success", "final", "repeat"] | FailureKind
FAILURE_KINDS: frozenset[str] = frozenset(get_args(FailureKind))


class Usage(TypedDict):
    input_tokens: int
    output_tokens: int
    total_tokens: int


def add_usage(current: Usage | None, spent: Usage) -> Usage:
    """Reducer: usage accumulates over the run."""
    base = current or {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    return {
        "input_tokens": base["input_tokens"] + spent["input_tokens"],
        "output_tokens": base["output_tokens"] + spent["output_tokens"],
        "total_tokens": base["total_tokens"] + spent["total_tokens"],
    }


class Proposal(TypedDict):
    """What the model's latest reply asked for."""

    kind: Literal["action", "final", "invalid"]
    thought: str
    tool: NotRequired[str]
    arguments: NotRequired[dict[str, Any]]
    answer: NotRequired[str]
    error: NotRequired[str]
    fingerprint: NotRequired[str]
    needs_approval: NotRequired[bool]
    raw: str


class StepRecord(TypedDict):
    """How one step ended, as the loop's counters see it."""

    step: int
    kind: StepKind
    summary: str
    fingerprint: str | None


class Verdict(TypedDict):
    """A decision to end the run."""

    status: Status
    reason: str


class TraceEvent(TypedDict):
    step: int
    event: str
    detail: dict[str, Any]


class InputState(TypedDict):
    """What a caller passes to start a run."""

    task: str


class AgentState(TypedDict, total=False):
    # --- input and identity ---------------------------------------------------------------
    task: str
    run_id: str

    # --- memory -------------------------------------------------------------------------
    reasoning_buffer: Annotated[list[ReasoningEntry], keep_window]
    tool_buffer: Annotated[list[ToolResultEntry], keep_window]

    # --- counters -----------------------------------------------------------------------
    steps: int
    success_streak: int
    failure_streak: int
    parse_failures: int
    tool_attempts: int
    tool_retries: int
    usage: Annotated[Usage, add_usage]
    temperature: float
    hints: list[str]
    prompt_tokens_estimate: int

    # --- the step in flight -------------------------------------------------------------
    prompt: list[BaseMessage]
    tool_names: list[str]
    proposal: Proposal | None
    result: dict[str, Any] | None
    executed: Annotated[list[str], operator.add]
    history: Annotated[list[StepRecord], operator.add]

    # --- outcome ------------------------------------------------------------------------
    verdict: Verdict | None
    status: Status
    reason: str
    answer: str | None
    trace: Annotated[list[TraceEvent], operator.add]
