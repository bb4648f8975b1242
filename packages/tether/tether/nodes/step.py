"""Close a step: record what kind it was, update every counter and buffer, and, when the
decision module says so, end the run with its status, reason and answer.

Whichever node finishes a step (the model's node for an answer, an unreadable reply or a
repeat; the tool's node for a result; the refusal and approval nodes for theirs) closes it
here, so the bookkeeping exists once.
"""

from __future__ import annotations

from typing import Any

from tether.decisions import notes, policy, stops
from tether.decisions import side_effects as effects
from tether.decisions.final_check import record_result
from tether.decisions.grounding import Grounds
from tether.decisions.profile import profile_for
from tether.llm.protocols import OutputProtocol
from tether.memory.render import result_text
from tether.memory.tokens import TokenCounter
from tether.nodes.base import emit
from tether.settings import AgentSettings
from tether.state import (
    AgentState,
    Proposal,
    RuleVerdict,
    ToolResult,
    ToolResultEntry,
    Usage,
    Verdict,
    add_usage,
    windowed,
)


def close_step(
    state: AgentState,
    settings: AgentSettings,
    counter: TokenCounter,
    *,
    proposal: Proposal,
    result: ToolResult | None,
    rule: RuleVerdict | None = None,
    protocol: OutputProtocol | None = None,
    first_run: bool = False,
    side_effects: bool = False,
    model_call: tuple[int, Usage] | None = None,
) -> dict[str, Any]:
    """The state update that closes the current step. ``protocol`` writes the note after an
    unusable reply; ``first_run`` says the call ran for the first time in this step (no
    retry before); ``side_effects`` that the tool changes the world (its transient failure
    leaves the outcome unknown); ``model_call``, (step, usage) of the model call that closes
    the step itself (an answer, an unusable reply, a repeat), which ``state`` does not hold
    yet: the step cap and the budget are judged with them counted."""
    if model_call is not None:
        step, spent = model_call
        state = {**state, "steps": step, "usage": add_usage(state.get("usage"), spent)}
    step = state.get("steps", 0)
    record = policy.classify(step, proposal, result, rule, settings)
    note = proposal.get("check")  # the final-answer check's note, for an answer sent back
    if record["kind"] == "parse_failure" and protocol is not None:
        note = protocol.failure_note(record["summary"])
    outcome = stops.assess(state, record, rule, settings, note=note)
    update = _step_record(state, outcome, settings)
    if proposal["kind"] == "action":
        calls = state.get("calls", {})
        events = policy.call_events(calls, record, result, ran=first_run, wrote=side_effects)
        update |= {"calls": events} if events else {}
        if result is not None:
            update["tool_buffer"] = _result_entry(step, proposal, result, counter, settings)
            tool, arguments = proposal.get("tool", ""), proposal.get("arguments")
            update["grounds"] = record_result(
                grounds(state), state["task"], tool, arguments, result
            )
    if record["kind"] == "sent_back":
        update["sent_back"] = True
    _emit_decision(step, outcome)
    return update | _ending(state, proposal, outcome, side_effects, settings)


def grounds(state: AgentState) -> Grounds | None:
    """What the run's tool calls established so far (plain data, folded by record_result)."""
    return state.get("grounds")  # type: ignore[return-value]


def _step_record(
    state: AgentState, outcome: stops.Assessment, settings: AgentSettings
) -> dict[str, Any]:
    """The step's record and the counters it moves: what every closed step writes."""
    record = outcome.record
    return {
        "history": windowed([record], policy.history_window(settings)),
        "success_streak": outcome.success_streak,
        "failure_streak": outcome.failure_streak,
        "parse_failures": state.get("parse_failures", 0) + (record["kind"] == "parse_failure"),
        "next_temperature": outcome.temperature,
        "hints": outcome.hints,
        "call_attempt": 0,
        "tool_failures": outcome.tool_failures,
    }


def _emit_decision(step: int, outcome: stops.Assessment) -> None:
    """The trace's account of how the step was judged."""
    emit(
        step,
        "decision",
        {
            "step_kind": outcome.record["kind"],
            "decision": outcome.decision,
            **({"cause": outcome.verdict["cause"]} if outcome.verdict else {}),
            "reason": outcome.verdict["reason"] if outcome.verdict else outcome.record["summary"],
            "success_streak": outcome.success_streak,
            "failure_streak": outcome.failure_streak,
            "next_temperature": outcome.temperature,
            "hints": outcome.hints,
        },
    )


def _ending(
    state: AgentState,
    proposal: Proposal,
    outcome: stops.Assessment,
    side_effects: bool,
    settings: AgentSettings,
) -> dict[str, Any]:
    """Where the run goes from here: on, a replay of a call whose outcome is unknown before
    it may stop, or the end with the verdict's status."""
    unresolved = effects.unresolved_after(state, proposal, outcome.record, side_effects)
    update: dict[str, Any] = {"unresolved": unresolved, "resolving": False}
    if effects.must_resolve_first(outcome.verdict, unresolved, state.get("resolving", False)):
        assert unresolved is not None
        emit(
            state.get("steps", 0),
            "resolve",
            {"tool": unresolved.get("tool"), "arguments": unresolved.get("arguments")},
        )
        replay: Proposal = {**unresolved, "gate": "run"}
        return update | {"proposal": replay, "resolving": True, "next": "act"}
    if outcome.verdict and (last_call := ask_at_cap(state, outcome.verdict, settings)):
        return update | last_call | {"hints": [*outcome.hints, *last_call["hints"]]}
    if outcome.verdict:
        answer = proposal.get("answer") if outcome.verdict["status"] == "completed" else None
        return update | end_run({**state, "unresolved": unresolved}, outcome.verdict, answer)
    return update | {"next": "think"}


def ask_at_cap(state: AgentState, verdict: Verdict, settings: AgentSettings) -> dict[str, Any]:
    """At a cap, with ``cap_answer``: the update that makes the next model call the last one,
    with no tools and a note asking for the best answer ({} when there is none to make)."""
    if not (verdict.get("cap") and settings.cap_answer) or state.get("closing"):
        return {}
    emit(state.get("steps", 0), "decision", {"last_answer": verdict})
    return {"closing": verdict, "hints": [notes.cap_note(verdict["cause"])], "next": "think"}


def _result_entry(
    step: int,
    proposal: Proposal,
    result: ToolResult,
    counter: TokenCounter,
    settings: AgentSettings,
) -> Any:
    """The tool buffer's new entry, its tokens counted once, here."""
    entry: ToolResultEntry = {
        "step": step,
        "tool": proposal.get("tool", ""),
        "arguments": proposal.get("arguments", {}),
        "result": result,
        "tokens": 0,
    }
    view = profile_for(settings).result_view(settings)
    entry["tokens"] = counter.count(result_text(entry, view=view))
    return windowed([entry], settings.tool_window)


def end_run(state: AgentState, verdict: Verdict, answer: str | None = None) -> dict[str, Any]:
    """The outcome fields for a run that stops here (and the trace's finish event)."""
    verdict = effects.settled_verdict(verdict, state.get("unresolved"))
    asked = verdict.get("cap") and state.get("unresolved") is None  # the answer at a cap
    answer = answer if verdict["status"] == "completed" or asked else None
    reason = verdict["reason"] + effects.unknown_outcome_note(state.get("unresolved"))
    emit(
        state.get("steps", 0),
        "finish",
        {
            "status": verdict["status"],
            "cause": verdict["cause"],
            "reason": reason,
            "usage": state.get("usage"),
            "answer": answer,
        },
    )
    return {
        "status": verdict["status"],
        "cause": verdict["cause"],
        "reason": reason,
        "answer": answer,
        "closing": None,
        "next": "end",
    }
