"""After a step: the counters it moves, the notes for the next prompt, and whether the run
stops (:mod:`.stop_rules`), as pure functions of (state, settings) and the step's record.

A stop about repetition or failure comes after the model was told why: the note before it
names what went wrong, and the stop follows only if the model goes on regardless.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tether.decisions import notes
from tether.decisions.stop_rules import StopFacts, first_stop, same_reply
from tether.settings import AgentSettings
from tether.state import AgentState, RuleVerdict, StepRecord, Verdict, call_key
from tether.vocabulary import FAILURE_KINDS


@dataclass
class Assessment:
    """What a finished step changes: counters, the next prompt's notes, and whether to stop."""

    record: StepRecord
    success_streak: int
    failure_streak: int
    temperature: float
    hints: list[str] = field(default_factory=list)
    verdict: Verdict | None = None
    tool_failures: dict[str, int] = field(default_factory=dict)

    @property
    def decision(self) -> str:
        """What the trace says of the step: stop, switch (after a failure, with a note) or go on."""
        switch = self.record["kind"] in FAILURE_KINDS and self.hints
        return "stop" if self.verdict else "switch" if switch else "continue"


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
    hints += hints_after(history, failure_streak, settings)
    facts = facts_after(state, history, failure_streak)
    verdict = _rule_stop(rule) or first_stop(facts, settings)
    return Assessment(
        record=record,
        success_streak=success_streak,
        failure_streak=failure_streak,
        temperature=temperature_for(success_streak, settings),
        hints=hints,
        verdict=verdict,
        tool_failures=dict(facts.tool_failures),
    )


def facts_after(state: AgentState, history: list[StepRecord], failure_streak: int) -> StopFacts:
    """The loop's facts for the stop rules after the step just recorded (``history[-1]``)."""
    last = history[-1]
    failures = dict(state.get("tool_failures") or {})
    if last["kind"] in FAILURE_KINDS and "tool" in last:
        failures[last["tool"]] = failures.get(last["tool"], 0) + 1
    return StopFacts(
        steps=state.get("steps", 0),
        history=history,
        failure_streak=failure_streak,
        usage=state.get("usage"),
        tool_failures=failures,
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


def temperature_for(success_streak: int, settings: AgentSettings) -> float:
    """Explore less once the run is going well."""
    if success_streak >= settings.calm_after_successes:
        return settings.calm_temperature
    return settings.temperature


def hints_after(
    history: list[StepRecord], failure_streak: int, settings: AgentSettings
) -> list[str]:
    """The notes the run's last steps bring, whatever the step was: the same unusable reply
    twice in a row (the next ends the run), and the failures' note (:func:`switch_hint`)."""
    hints = [notes.same_reply_note(ends_next=True)] if same_reply(history, 2) else []
    hint = switch_hint(history, failure_streak, settings)
    return [*hints, hint] if hint else hints


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
        "cause": "rule",
        "reason": f"rule {rule['rule']}: {rule['reason']}",
    }
