"""After a step: the counters it moves, the notes for the next prompt, and whether the run
stops, as pure functions of (state, settings) and the step's record.

A stop about repetition or failure comes after the model was told why: the note before it
names what went wrong, and the stop follows only if the model goes on regardless.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tether.decisions import notes
from tether.settings import AgentSettings
from tether.state import (
    FAILURE_KINDS,
    AgentState,
    RuleVerdict,
    StepRecord,
    Usage,
    Verdict,
    call_key,
)


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
    note: str | None = None,
) -> Assessment:
    """The counters after ``record``, the notes for the next prompt, and the verdict.
    ``note`` is the one the step's closer wrote: the protocol's for a reply it could not
    parse, or the final-answer check's for an answer it sends back."""
    history = [*state.get("history", []), record]
    failed = record["kind"] in FAILURE_KINDS
    success_streak = state.get("success_streak", 0) + 1 if record["kind"] == "success" else 0
    failure_streak = state.get("failure_streak", 0) + 1 if failed else 0
    hints = [note] if note else []
    if rule is not None and rule["action"] == "switch":
        hints.append(f"Rule {rule['rule']}: {rule['reason']}")
    if record["kind"] == "recall":
        hints.append(recall_hint(state, record, settings))
    if same_reply(history, 2):
        hints.append(notes.same_reply_note(ends_next=True))
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
    if same_reply(history, 3):
        return {
            "status": "no_progress",
            "reason": "the same unusable reply three times in a row, the last after a note: "
            f"{last['summary']}",
        }
    if tripped := breaker(history, failure_streak, settings):
        return tripped
    if spent := over_budget(state.get("usage"), settings):
        return spent
    if steps >= settings.max_steps:
        return {
            "status": "max_steps",
            "reason": f"step cap reached: {settings.max_steps} model calls without a final answer",
            "cap": True,
        }
    return None


def same_reply(history: list[StepRecord], times: int) -> bool:
    """The last ``times`` replies were the same unusable one (the design note's loop of one
    Thought with no Action): at two a note says so, at three the run ends."""
    if len(history) < times:
        return False
    last = history[-times:]
    first = last[0]["fingerprint"]
    return first is not None and all(
        r["kind"] == "parse_failure" and r["fingerprint"] == first for r in last
    )


def recall_hint(state: AgentState, record: StepRecord, settings: AgentSettings) -> str:
    """The note for a call answered from its record: what it returned, and whether one more
    proposal of it ends the run."""
    call = state.get("calls", {}).get(call_key(record["fingerprint"] or ""))
    known = call.get("known", []) if call else []
    noted = call.get("noted", 0) if call else 0
    step = call.get("step", record["step"]) if call else record["step"]
    last = noted + 1 >= settings.repeat_notes
    return notes.recall_note(record.get("tool", ""), step, known, last)


def breaker(
    history: list[StepRecord], failure_streak: int, settings: AgentSettings
) -> Verdict | None:
    """``breaker_failures`` consecutive failed steps put the run on notice (the note after the
    last of them says so, :func:`switch_hint`); one more opens the circuit, listing each."""
    if failure_streak <= settings.breaker_failures:
        return None
    listed = "; ".join(
        f"step {r['step']} {r['kind']}: {r['summary']}" for r in history[-failure_streak:]
    )
    return {
        "status": "failed",
        "reason": f"circuit breaker: {failure_streak} consecutive failed steps ({listed})",
        "cap": True,
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
        "cap": True,
    }


def temperature_for(success_streak: int, settings: AgentSettings) -> float:
    """Explore less once the run is going well."""
    if success_streak >= settings.calm_after_successes:
        return settings.calm_temperature
    return settings.temperature


def switch_hint(
    history: list[StepRecord], failure_streak: int, settings: AgentSettings
) -> str | None:
    """After enough consecutive failures, tell the model to change course, and once the
    breaker is about to open, that one more failure ends the run. The note names each failed
    step, its tool and the error's words from tether's error vocabulary (:mod:`.notes`): a
    tool's own text stays in the tool results section, quoted, never in a controller note."""
    warn = failure_streak == settings.breaker_failures
    if failure_streak < settings.switch_after_failures and not warn:
        return None
    failures = [
        (r["step"], r["kind"], r.get("tool"), r.get("cues", []))
        for r in history[-min(failure_streak, 3) :]
    ]
    return notes.failure_note(failures, ends_next=warn)


def _rule_stop(rule: RuleVerdict | None) -> Verdict | None:
    if rule is None or rule["action"] != "stop":
        return None
    return {
        "status": rule.get("status", "failed"),
        "reason": f"rule {rule['rule']}: {rule['reason']}",
    }
