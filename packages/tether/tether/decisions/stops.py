"""After a step: the counters it moves, the notes for the next prompt, and whether the run
stops, as pure functions of (state, settings) and the step's record.

A stop about repetition or failure comes after the model was told why: the note before it
names what went wrong, and the stop follows only if the model goes on regardless.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tether.settings import AgentSettings
from tether.state import FAILURE_KINDS, AgentState, RuleVerdict, StepRecord, Usage, Verdict


@dataclass
class Assessment:
    """What a finished step changes: counters, the next prompt's notes, and whether to stop."""

    record: StepRecord
    success_streak: int
    failure_streak: int
    temperature: float
    hints: list[str] = field(default_factory=list)
    verdict: Verdict | None = None

    @property
    def decision(self) -> str:
        if self.verdict:
            return "stop"
        return "switch" if self.record["kind"] in FAILURE_KINDS and self.hints else "continue"


def assess(
    state: AgentState,
    record: StepRecord,
    rule: RuleVerdict | None,
    settings: AgentSettings,
    *,
    failure_note: str | None = None,
) -> Assessment:
    """The counters after ``record``, the notes for the next prompt, and the verdict.
    ``failure_note`` is the protocol's own note for a reply it could not parse."""
    history = [*state.get("history", []), record]
    failed = record["kind"] in FAILURE_KINDS
    success_streak = state.get("success_streak", 0) + 1 if record["kind"] == "success" else 0
    failure_streak = state.get("failure_streak", 0) + 1 if failed else 0
    hints: list[str] = []
    if failure_note:
        hints.append(failure_note)
    if rule is not None and rule["action"] == "switch":
        hints.append(f"Rule {rule['rule']}: {rule['reason']}")
    if hint := switch_hint(history, failure_streak, settings):
        hints.append(hint)
    verdict = _rule_stop(rule) or after_step(state, history, failure_streak, settings)
    return Assessment(
        record=record,
        success_streak=success_streak,
        failure_streak=failure_streak,
        temperature=temperature_for(success_streak, settings),
        hints=hints,
        verdict=verdict,
    )


def after_step(
    state: AgentState, history: list[StepRecord], failure_streak: int, settings: AgentSettings
) -> Verdict | None:
    """Whether the run ends after the step just recorded, and why. First match wins."""
    last = history[-1]
    steps = state.get("steps", 0)
    if last["kind"] == "final":
        return {"status": "completed", "reason": f"final answer after {steps} step(s)"}
    if last["kind"] == "repeat":
        return {"status": "no_progress", "reason": last["summary"]}
    if repeated_thought(history):
        return {
            "status": "no_progress",
            "reason": f"the same Thought with no Action twice in a row: {last['summary']}",
        }
    if tripped := breaker(history, failure_streak, settings):
        return tripped
    if spent := over_budget(state.get("usage"), settings):
        return spent
    if steps >= settings.max_steps:
        return {
            "status": "max_steps",
            "reason": f"step cap reached: {settings.max_steps} model calls without a final answer",
        }
    return None


def repeated_thought(history: list[StepRecord]) -> bool:
    """Two consecutive replies with the same Thought and no Action (the design note's loop)."""
    if len(history) < 2:
        return False
    a, b = history[-2], history[-1]
    return (
        a["kind"] == b["kind"] == "parse_failure"
        and a["fingerprint"] is not None
        and a["fingerprint"] == b["fingerprint"]
    )


def breaker(
    history: list[StepRecord], failure_streak: int, settings: AgentSettings
) -> Verdict | None:
    """``breaker_failures`` consecutive failed steps open the circuit, listing each."""
    if failure_streak < settings.breaker_failures:
        return None
    listed = "; ".join(
        f"step {r['step']} {r['kind']}: {r['summary']}" for r in history[-failure_streak:]
    )
    return {
        "status": "failed",
        "reason": f"circuit breaker: {failure_streak} consecutive failed steps ({listed})",
    }


def over_budget(usage: Usage | None, settings: AgentSettings) -> Verdict | None:
    if usage is None or usage["total_tokens"] <= settings.token_budget:
        return None
    return {
        "status": "partial",
        "reason": (
            f"token budget {settings.token_budget} exceeded: spent {usage['total_tokens']} "
            f"({usage['input_tokens']} in, {usage['output_tokens']} out)"
        ),
    }


def temperature_for(success_streak: int, settings: AgentSettings) -> float:
    """Explore less once the run is going well."""
    if success_streak >= settings.calm_after_successes:
        return settings.calm_temperature
    return settings.temperature


def switch_hint(
    history: list[StepRecord], failure_streak: int, settings: AgentSettings
) -> str | None:
    """After enough consecutive failures, tell the model to change course. The note names the
    failed step and its kind only: the failure's text (a tool's words) stays in the tool
    results section, quoted, and never becomes a controller note."""
    if failure_streak < settings.switch_after_failures:
        return None
    last = history[-1]
    what = f"step {last['step']} ({last['kind'].replace('_', ' ')})"
    return (
        f"Your last {failure_streak} steps failed; the latest was {what}. "
        "Do not repeat it: use another tool, or the same tool with different arguments."
    )


def _rule_stop(rule: RuleVerdict | None) -> Verdict | None:
    if rule is None or rule["action"] != "stop":
        return None
    return {
        "status": rule.get("status", "failed"),
        "reason": f"rule {rule['rule']}: {rule['reason']}",
    }
