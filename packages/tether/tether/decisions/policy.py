"""Every decision the loop makes, as pure functions of (state, settings) and facts.

Nodes do the work (call the model, run the tool) and record facts; they ask this module what
those facts mean: stop or go on before a call (budget, cancel), what to do with a proposed
call (run, ask, refuse, end on a repeat), whether to retry a failed call and after how long,
what kind of step it was, and after it whether to stop, switch strategy or cool down.
Nothing here has side effects; every function is tested on its own.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from langchain_core.tools import BaseTool
from pydantic import BaseModel
from tenacity import RetryCallState, wait_exponential

from tether.decisions import notes, side_effects
from tether.decisions.offer import Offer
from tether.decisions.rules import Rule
from tether.settings import AgentSettings
from tether.state import (
    HISTORY_KEPT,
    AgentState,
    CallEvent,
    CallRecord,
    Proposal,
    RuleVerdict,
    StepRecord,
    ToolResult,
    Verdict,
    call_key,
)
from tether.tools.envelope import LOOP_ORIGIN
from tether.tools.marks import has_side_effects
from tether.tools.registry import validated
from tether.vocabulary import FAILURE_KINDS, TOOL_ERROR_TYPES, Gate

SUMMARY_CHARS = 300


def usage_problem(meta: Any, counted: tuple[int, int], max_tokens: int) -> str | None:
    """Why a server's reported usage cannot be taken (None: it can): missing, malformed,
    not adding up, or implausible against what was counted, (prompt, reply) tokens."""
    if not meta or not meta.get("total_tokens"):
        return "the server reported no usage; tokens were counted"
    values = [meta.get(k) for k in ("input_tokens", "output_tokens", "total_tokens")]
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values):
        return f"the server reported unusable usage {values}; tokens were counted"
    inp, out, total = values
    if total != inp + out:
        return f"the server's usage does not add up ({inp} + {out} != {total}); tokens were counted"
    prompt, written = counted
    low = 4 * inp + 64 < prompt or 4 * out + 64 < written
    if low or inp > 4 * prompt + 2048 or out > 2 * max_tokens + 64:
        return (
            f"the server's usage is implausibly {'low' if low else 'high'} ({inp} in, {out} out "
            f"for a prompt of ~{prompt} tokens, a reply of ~{written} and max_tokens "
            f"{max_tokens}); tokens were counted"
        )
    return None


# --- before a model call ----------------------------------------------------------------------


def before_call(
    state: AgentState, settings: AgentSettings, *, prompt_tokens: int, cancelled: str | None
) -> Verdict | None:
    """Stop instead of spending: a cancel request, or a prompt that would cross the token
    budget. With ``cap_answer`` a step also keeps the reserve the last answer's reply needs
    (``max_tokens``; its prompt is cut to what is left, :func:`prompt_budget`)."""
    if cancelled is not None:
        return {"status": "cancelled", "cause": "cancel", "reason": f"cancelled: {cancelled}"}
    spent = _spent(state)
    closing = state.get("closing") is not None
    reserve = settings.max_tokens if settings.cap_answer and not closing else 0
    if spent + prompt_tokens + reserve <= settings.token_budget:
        return None
    kept = f", keeping ~{reserve} for a last answer" if reserve else ""
    return {
        "status": "partial",
        "cause": "budget",
        "reason": (
            f"token budget {settings.token_budget} would be exceeded: spent {spent}, "
            f"next prompt ~{prompt_tokens} tokens{kept}"
        ),
        "cap": True,
    }


def prompt_budget(state: AgentState, settings: AgentSettings) -> int:
    """Tokens the next prompt may fill: the memory budget, and for the last answer's call at
    a cap, no more than the token budget has left beside its reply."""
    if state.get("closing") is None:
        return settings.memory_budget
    left = settings.token_budget - _spent(state) - settings.max_tokens
    return max(0, min(settings.memory_budget, left))


def _spent(state: AgentState) -> int:
    usage = state.get("usage")
    return usage["total_tokens"] if usage else 0


# --- a proposed call --------------------------------------------------------------------------


def approval_rule(tool: BaseTool | None, settings: AgentSettings) -> str | None:
    """Why this tool waits for approval (which setting or mark asks for it), or None."""
    if tool is None or (settings.approval_tools is None and not has_side_effects(tool)):
        return None
    if settings.approval_tools is None:
        return "is marked side_effects (approval_tools is unset: such tools need approval)"
    return (
        "is listed in the approval_tools setting" if tool.name in settings.approval_tools else None
    )


class GateDecision(NamedTuple):
    """What to do with a proposed call, and why (for ``approve`` and ``refuse``)."""

    gate: Gate
    reason: str | None = None


def gate(
    state: AgentState,
    proposal: Proposal,
    tool: BaseTool | None,
    settings: AgentSettings,
    offer: Offer | None = None,
) -> GateDecision:
    """What to do with a proposed call: refuse a call that failed on its last two runs or that
    the operator just rejected; answer a call that already succeeded from its record, with a
    note, until ``repeat_notes`` notes were sent about it, then end on it (without notes: end
    on the ``repeat_limit``-th identical call); refuse a call the step's ``offer`` does not
    allow; ask first when approval is needed (not for arguments the tool refuses); else run."""
    fingerprint = proposal.get("fingerprint", "")
    record = state.get("calls", {}).get(call_key(fingerprint))
    replay = side_effects.is_replay_of_unresolved(state, fingerprint)
    if record is not None and not replay:
        if rejected_last(record):
            return GateDecision("refuse", "was rejected by the operator last time")
        outcomes = record["outcomes"]
        if len(outcomes) >= 2 and all(kind in FAILURE_KINDS for kind in outcomes[-2:]):
            return GateDecision("refuse", "failed on its last two runs")
        if outcomes[-1:] == ["success"] and settings.repeat_notes:
            noted = record.get("noted", 0)
            return GateDecision("repeat" if noted >= settings.repeat_notes else "recall")
        if not settings.repeat_notes and record["runs"] >= settings.repeat_limit - 1:
            return GateDecision("repeat")
    if not replay and offer and (why := offer.refusal(tool, proposal.get("arguments"))):
        return GateDecision("refuse", why)
    rule = approval_rule(tool, settings)
    if tool is not None and not isinstance(validated(tool, proposal.get("arguments")), BaseModel):
        rule = None  # not run either: the validation error goes back to the model, unasked
    return GateDecision("approve", rule) if rule else GateDecision("run")


def rejected_last(record: CallRecord) -> bool:
    """The operator rejected this exact call the last time it was proposed: asking again
    would put the same question to them, so it is refused (one step, no new pause)."""
    return record["outcomes"][-1:] == ["rejected"]


NOT_AN_OUTCOME = frozenset({"refused", "repeat", "recall"})
"""Step kinds that say nothing about how the call itself fares."""
STALE = "stale"
"""The outcome a success turns into once a write succeeds after it: proposed again, the call
runs again rather than being answered from a record the write may have changed."""


def stale_records(calls: Mapping[str, CallRecord], but: str | None = None) -> list[CallEvent]:
    """Every success on record but ``but`` made stale: the world may have changed since (a
    write succeeded, or the user spoke again), so a call proposed again runs again. Within a
    run a write's own record stays: a repeated write is not made twice."""
    return [
        {"key": key, "outcome": STALE}
        for key, call in calls.items()
        if key != but and call["outcomes"][-1:] == ["success"]
    ]


def call_events(
    calls: Mapping[str, CallRecord],
    record: StepRecord,
    result: ToolResult | None,
    *,
    ran: bool,
    wrote: bool = False,
) -> list[CallEvent]:
    """What the step adds to the run's call memory (:func:`tether.state.record_calls`): the
    call ran (``ran``: once per step), how it fared, what a success returned (as a note may
    quote it), a note sent about proposing it again. A write's success (``wrote``) makes
    every other success on record stale (:func:`stale_records`)."""
    if not record["fingerprint"]:
        return []
    key = call_key(record["fingerprint"])
    events: list[CallEvent] = [{"key": key, "ran": True}] if ran else []
    if wrote and record["kind"] == "success":
        events += stale_records(calls, but=key)
    if record["kind"] not in NOT_AN_OUTCOME:
        event: CallEvent = {"key": key, "outcome": record["kind"]}
        if record["kind"] == "success" and result is not None:
            event |= {"step": record["step"], "known": notes.plain_values(result.get("data"))}
        events.append(event)
    if record["kind"] == "recall":
        events.append({"key": key, "noted": True})
    return events


def history_window(settings: AgentSettings) -> int:
    """How many step records the state keeps: enough for the breaker and the switch."""
    return max(HISTORY_KEPT, settings.breaker_failures + 1, settings.switch_after_failures)


# --- a tool result ----------------------------------------------------------------------------


def judge(
    rules: Sequence[Rule], state: AgentState, result: ToolResult, settings: AgentSettings
) -> RuleVerdict | None:
    """The first decisive rule's verdict, tagged with the rule's name. A rule that raises or
    answers nonsense is a bug in that rule: it is reported, not obeyed."""
    for rule in rules:
        decision: Any = rule(state, {**result, "meta": dict(result["meta"])}, settings)
        if not isinstance(decision, dict):
            continue
        action = decision.get("action", "continue")
        if action not in ("retry", "switch", "stop"):
            continue
        verdict: RuleVerdict = {
            "action": action,
            "reason": str(decision.get("reason", "")),
            "rule": getattr(rule, "__name__", type(rule).__name__),
        }
        if action == "stop":
            verdict["status"] = _stop_status(decision.get("status"))
        return verdict
    return None


def _stop_status(value: Any) -> Any:
    """A rule's stop is ``failed`` unless it names partial or no_progress (never completed)."""
    return value if value in ("failed", "partial", "no_progress") else "failed"


def wants_retry(
    result: ToolResult, rule: RuleVerdict | None, attempts: int, settings: AgentSettings
) -> bool:
    """Retry in place a transient failure, or a result a rule wants retried, while attempts
    remain (``tool_attempts`` counts the first one)."""
    transient = result["status"] == "error" and result["meta"].get("error_type") == "transient"
    asked = rule is not None and rule["action"] == "retry"
    return (transient or asked) and attempts < settings.tool_attempts


def backoff_delay(attempt: int, settings: AgentSettings, rng: random.Random) -> float:
    """Full jitter over tenacity's exponential schedule before retry number ``attempt``.

    tenacity gives the ceiling (``retry_base_delay * 2**(attempt-1)``, capped at
    ``retry_max_delay``); the jitter is drawn from the run's seeded ``rng`` so tests and
    benchmarks can replay it (tenacity's own jitter uses the global random module).
    """
    call = RetryCallState(None, None, (), {})  # type: ignore[arg-type]  # no Retrying needed
    call.attempt_number = attempt
    ceiling = wait_exponential(multiplier=settings.retry_base_delay, max=settings.retry_max_delay)
    return rng.uniform(0, ceiling(call))


# --- what kind of step it was -----------------------------------------------------------------


def classify(
    step: int,
    proposal: Proposal,
    result: ToolResult | None,
    rule: RuleVerdict | None,
    settings: AgentSettings,
) -> StepRecord:
    """What kind of step this was, with a one-line summary written by tether."""
    if proposal["kind"] == "final":
        answer = proposal.get("answer", "")
        if answer.strip() and (note := proposal.get("check")):
            return _record(step, "sent_back", f"the final answer was sent back once: {note}", None)
        if answer.strip():
            record = _record(step, "final", answer, None)
            return {**record, "unbacked": True} if proposal.get("unbacked") else record
        return _record(step, "parse_failure", "the final answer is empty", "final:")
    if proposal["kind"] == "invalid":
        thought = " ".join(proposal["thought"].split()).lower()
        key = f"thought:{thought}" if thought else None
        return _record(step, "parse_failure", proposal.get("error", ""), key)
    fingerprint = proposal.get("fingerprint")
    tool = proposal.get("tool", "")
    if proposal.get("gate") == "repeat":  # closed in think, unrun
        return _record(step, "repeat", _repeat_summary(proposal, settings), fingerprint)
    if proposal.get("gate") == "recall":  # closed in think, answered from the call's record
        recalled = _record(step, "recall", f"{tool} succeeded before: not run again", fingerprint)
        recalled["tool"] = tool
        return recalled
    if result is None:
        raise RuntimeError(f"the step of {tool} closed without a result")
    if rule is not None and rule["action"] in ("switch", "retry"):
        return _record(step, "rule_failure", f"{rule['rule']}: {rule['reason']}", fingerprint)
    if result["status"] == "success":
        return _record(step, "success", f"{tool} succeeded", fingerprint)
    kind = _error_kind(result)
    failed = _record(step, kind, result.get("message", ""), fingerprint)
    if proposal.get("registered"):  # else the name is the model's, never a note's
        failed["tool"] = tool
    failed["cues"] = notes.error_words(result.get("message", ""))
    return failed


def _repeat_summary(proposal: Proposal, settings: AgentSettings) -> str:
    what = f"{proposal.get('tool', '')} proposed with the same arguments"
    if settings.repeat_notes:
        return f"{what} again after {settings.repeat_notes} note(s): {proposal.get('fingerprint')}"
    return f"{what} for the {_ordinal(settings.repeat_limit)} time: {proposal.get('fingerprint')}"


def _error_kind(result: ToolResult) -> Any:
    """Whatever a tool calls its error, an executed call that failed is a tool error unless it
    is one of the registry's own kinds, or the loop's own (refused, rejected)."""
    meta = result["meta"]
    kind = str(meta.get("error_type", "tool_error"))
    if meta.get("origin") == LOOP_ORIGIN or kind in TOOL_ERROR_TYPES:
        return kind
    return "tool_error"


def _record(step: int, kind: Any, summary: str, fingerprint: str | None) -> StepRecord:
    return {
        "step": step,
        "kind": kind,
        "summary": summary[:SUMMARY_CHARS],
        "fingerprint": fingerprint,
    }


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
