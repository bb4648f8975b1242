"""What one run left behind: the answer, how it ended, and every model and tool call, timed.

Every agent produces the same record from the same instruments (a callback on the chat model
and a recording tool registry), so no agent's numbers come from its own bookkeeping.
"""

from __future__ import annotations

import itertools
from typing import Any, Literal

from pydantic import BaseModel, Field

SCHEMA_ERRORS = frozenset({"validation_error", "unknown_tool"})
"""A tool call's error types that say it never got past the tool's schema."""

TerminationKind = Literal["completed", "max_steps", "no_progress", "failed", "partial", "error"]
"""completed: the agent ended with its own final answer. max_steps: a step, call or recursion
cap cut it off. no_progress / failed / partial: a controller stopped it (loop, breaker,
budget). error: an exception escaped the agent."""


class ModelCall(BaseModel):
    """One chat-model request, as the HTTP client saw it."""

    start: float = Field(description="Seconds since the run started.")
    end: float
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    usage_reported: bool = Field(False, description="The server reported usage for this call.")
    asked_tool: bool = Field(
        False,
        description="The reply tried to call a tool (a tool call, parsable or not, an Action "
        "line, or a JSON action naming a tool).",
    )
    error: str | None = None

    @property
    def seconds(self) -> float:
        return self.end - self.start


class ToolCall(BaseModel):
    """One call that reached the tool registry (unparseable attempts never do)."""

    tool: str
    arguments: Any = None
    status: Literal["success", "error"]
    error_type: str | None = None
    start: float
    end: float
    turn: int = Field(description="0-based index of the model call that asked for it.")
    result: Any = Field(
        None,
        description="The data a successful call returned (JSON-safe); what an answer's claims "
        "may be grounded in.",
    )

    @property
    def seconds(self) -> float:
        return self.end - self.start


class Approval(BaseModel):
    """One gated write the operator was asked about, and its answer."""

    tool: str
    arguments: Any = None
    approved: bool
    valid: bool = Field(
        True, description="The arguments validated (else the tool's validation answered it)."
    )
    turn: int = Field(description="0-based index of the model call that proposed it.")


class Outcome(BaseModel):
    """How the agent itself says the run ended."""

    answer: str | None = None
    termination: TerminationKind
    reason: str = ""
    cause: str | None = None
    """tether's stop cause (:data:`tether.StopCause`), for tether's agents; None for others."""
    messages: list[str] = Field(default_factory=list)
    """A conversation's user messages as sent, the task first (empty: a task of one message)."""
    replies: list[str | None] = Field(default_factory=list)
    """A conversation's reply to each of ``messages``."""


class Verdict(BaseModel):
    """The judge's decision on one run, with every reason it failed."""

    passed: bool
    failures: list[str] = Field(default_factory=list)


class RunRecord(BaseModel):
    """One agent on one scenario (one trial), measured the same way for every agent."""

    agent: str
    scenario_id: str
    category: str
    trial: int = 0
    answer: str | None = None
    termination: TerminationKind
    termination_reason: str = ""
    termination_cause: str | None = None
    wall_s: float
    model_calls: list[ModelCall] = Field(default_factory=list)
    tool_calls: list[ToolCall] = Field(default_factory=list)
    verdict: Verdict | None = None
    extra: dict[str, Any] = Field(default_factory=dict)
    approvals: list[Approval] = Field(
        default_factory=list, description="Every write the operator was asked about, in order."
    )
    user_messages: list[str] = Field(
        default_factory=list,
        description="A conversation's user messages as sent, the task first (empty: one task).",
    )
    replies: list[str | None] = Field(
        default_factory=list, description="A conversation's reply to each user message."
    )
    unintended_writes_executed: int = Field(
        0,
        description="Calls of a write tool that reached the world although the operator would "
        "not approve them (a gate bypassed); 0 under the operator.",
    )

    # --- derived, the same arithmetic for every agent ------------------------------------
    @property
    def steps(self) -> int:
        """Steps to termination: model calls (each step is one model call and its tools)."""
        return len(self.model_calls)

    @property
    def model_s(self) -> float:
        return sum(c.seconds for c in self.model_calls)

    @property
    def tool_s(self) -> float:
        return sum(c.seconds for c in self.tool_calls)

    @property
    def total_tokens(self) -> int:
        return sum(c.total_tokens for c in self.model_calls)

    @property
    def input_tokens(self) -> int:
        return sum(c.input_tokens for c in self.model_calls)

    @property
    def output_tokens(self) -> int:
        return sum(c.output_tokens for c in self.model_calls)

    @property
    def usage_complete(self) -> bool:
        """Every model call had server-reported usage."""
        return all(c.usage_reported for c in self.model_calls)

    def step_latencies(self) -> list[float]:
        """Step i lasts from model call i's start to call i+1's start (the run's end last)."""
        starts = [c.start for c in self.model_calls]
        if not starts:
            return []
        ends = [*starts[1:], self.wall_s]
        return [max(0.0, end - start) for start, end in zip(starts, ends, strict=True)]

    def retry_waits(self) -> list[float]:
        """Per step: time between attempts at its tool calls (backoff before a retry)."""
        waits = []
        for turn in range(len(self.model_calls)):
            calls = sorted((t for t in self.tool_calls if t.turn == turn), key=lambda t: t.start)
            waits.append(sum(max(0.0, b.start - a.end) for a, b in itertools.pairwise(calls)))
        return waits

    def step_overheads(self) -> list[float]:
        """Per step: its time minus time inside the model, inside tools and waiting between
        retries: what the framework itself spends (prompt building, parsing, state)."""
        overheads = []
        for turn, (call, latency, wait) in enumerate(
            zip(self.model_calls, self.step_latencies(), self.retry_waits(), strict=True)
        ):
            tools = sum(t.seconds for t in self.tool_calls if t.turn == turn)
            overheads.append(max(0.0, latency - call.seconds - tools - wait))
        return overheads

    def tool_turns(self) -> tuple[int, int]:
        """(turns that asked for a tool, those that got a valid, successful call).

        A turn asked for a tool unless it was the final answer that ended the run, so a reply
        that could not be parsed counts as a failed tool turn; a run-ending reply that itself
        tried to call a tool (an unparsable tool call an agent took for an answer) counts too.
        A turn succeeded when a call made for it came back successful (after in-place retries,
        if the agent retries).
        """
        asked = self._asked_turns()
        ok = {t.turn for t in self.tool_calls if t.status == "success"}
        return len(asked), len(ok & asked)

    def schema_valid_turns(self) -> int:
        """Tool turns (as :meth:`tool_turns` counts them) with a call that parsed and passed
        its tool's schema: the tool ran, whatever it answered. Constrained decoding makes
        calls well-formed; this says how many were, apart from whether they were right."""
        valid = {t.turn for t in self.tool_calls if t.error_type not in SCHEMA_ERRORS}
        return len(valid & self._asked_turns())

    def _asked_turns(self) -> set[int]:
        calls = self.model_calls
        return {
            i
            for i, call in enumerate(calls)
            if call.asked_tool or not (self.termination == "completed" and i == len(calls) - 1)
        }

    # --- writes under the operator ----------------------------------------------------------
    @property
    def writes_attempted(self) -> int:
        """Write calls the agent proposed and the operator was asked about."""
        return len(self.approvals)

    @property
    def unintended_writes_attempted(self) -> int:
        """Proposed writes the operator rejected (the scenario does not call for them)."""
        return sum(not a.approved for a in self.approvals)

    def steps_after_rejection(self) -> int | None:
        """Model calls after the one that proposed the first rejected write; None without a
        rejection. What a rejection cost the run."""
        first = next((a.turn for a in self.approvals if not a.approved), None)
        return None if first is None else max(0, self.steps - first - 1)

    def summary(self) -> dict[str, Any]:
        """The derived numbers, for results.json."""
        asked, ok = self.tool_turns()
        return {
            "steps": self.steps,
            "tool_calls": len(self.tool_calls),
            "model_s": round(self.model_s, 6),
            "tool_s": round(self.tool_s, 6),
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
            "usage_complete": self.usage_complete,
            "tool_turns": asked,
            "tool_turns_ok": ok,
            "schema_valid_turns": self.schema_valid_turns(),
            "step_latencies": [round(x, 6) for x in self.step_latencies()],
        } | self.writes_summary()

    def writes_summary(self) -> dict[str, Any]:
        """The write counts, for results.json."""
        return {
            "writes_attempted": self.writes_attempted,
            "unintended_writes_attempted": self.unintended_writes_attempted,
            "unintended_writes_executed": self.unintended_writes_executed,
            "steps_after_rejection": self.steps_after_rejection(),
        }
