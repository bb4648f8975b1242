"""The loop's policy as pure functions of the state: when to stop, refuse, switch or retry.

Each function answers one question and is tested on its own; nodes call them to record a
decision and routing functions read that decision. Nothing here has side effects.
"""

from __future__ import annotations

import random

from langchain_core.tools import BaseTool

from tether.graph.state import FAILURE_KINDS, AgentState, StepRecord, Verdict
from tether.settings import AgentSettings
from tether.tools.marks import has_side_effects


def trailing_failures(history: list[StepRecord]) -> list[StepRecord]:
    """The unbroken run of failed steps at the end of the history."""
    run: list[StepRecord] = []
    for record in reversed(history):
        if record["kind"] not in FAILURE_KINDS:
            break
        run.append(record)
    return run[::-1]


def should_refuse(state: AgentState, fingerprint: str) -> bool:
    """A call whose last two executions both failed is not run a third time."""
    runs = [
        r
        for r in state.get("history", [])
        if r["fingerprint"] == fingerprint and r["kind"] not in ("refused", "repeat")
    ]
    return len(runs) >= 2 and all(r["kind"] in FAILURE_KINDS for r in runs[-2:])


def is_repeat(state: AgentState, fingerprint: str, settings: AgentSettings) -> bool:
    """Running this call now would make it the ``repeat_limit``-th identical call."""
    return state.get("executed", []).count(fingerprint) >= settings.repeat_limit - 1


def needs_approval(tool: BaseTool | None, settings: AgentSettings) -> bool:
    """Named in approval_tools, or (when that is unset) marked as having side effects."""
    if tool is None:
        return False
    if settings.approval_tools is None:
        return has_side_effects(tool)
    return tool.name in settings.approval_tools


def after_step(state: AgentState, settings: AgentSettings) -> Verdict | None:
    """Whether the run ends after the step just recorded, and why. First match wins."""
    history = state.get("history", [])
    last = history[-1] if history else None
    if last and last["kind"] == "final":
        return {"status": "completed", "reason": f"final answer after {state['steps']} step(s)"}
    if last and last["kind"] == "repeat":
        return {"status": "no_progress", "reason": last["summary"]}
    if repeated_thought(history):
        thought = history[-1]["summary"]
        return {
            "status": "no_progress",
            "reason": f"the same Thought with no Action twice in a row: {thought}",
        }
    if tripped := breaker(history, settings):
        return tripped
    if spent := over_budget(state, settings):
        return spent
    if state.get("steps", 0) >= settings.max_iters:
        return {
            "status": "max_steps",
            "reason": f"step cap reached: {settings.max_iters} model calls without a final answer",
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


def breaker(history: list[StepRecord], settings: AgentSettings) -> Verdict | None:
    failures = trailing_failures(history)
    if len(failures) < settings.breaker_failures:
        return None
    listed = "; ".join(f"step {r['step']} {r['kind']}: {r['summary']}" for r in failures)
    return {
        "status": "failed",
        "reason": f"circuit breaker: {len(failures)} consecutive failed steps ({listed})",
    }


def over_budget(state: AgentState, settings: AgentSettings) -> Verdict | None:
    usage = state.get("usage") or {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    if usage["total_tokens"] <= settings.token_budget:
        return None
    return {
        "status": "partial",
        "reason": (
            f"token budget {settings.token_budget} exceeded: spent {usage['total_tokens']} "
            f"({usage['input_tokens']} in, {usage['output_tokens']} out)"
        ),
    }


def before_call(state: AgentState, settings: AgentSettings, estimate: int) -> Verdict | None:
    """Stop instead of spending when the next prompt alone would cross the budget."""
    usage = state.get("usage")
    spent = usage["total_tokens"] if usage else 0
    if spent + estimate <= settings.token_budget:
        return None
    return {
        "status": "partial",
        "reason": (
            f"token budget {settings.token_budget} would be exceeded: spent {spent}, "
            f"next prompt ~{estimate} tokens"
        ),
    }


def temperature_for(success_streak: int, settings: AgentSettings) -> float:
    """Explore less once the run is going well."""
    if success_streak >= settings.calm_after_successes:
        return settings.calm_temperature
    return settings.temperature


def switch_hint(history: list[StepRecord], settings: AgentSettings) -> str | None:
    """After enough consecutive failures, tell the model to change course and say from what."""
    failures = trailing_failures(history)
    if len(failures) < settings.switch_after_failures:
        return None
    last = failures[-1]
    call = f" ({last['fingerprint']})" if last["fingerprint"] else ""
    return (
        f"Your last {len(failures)} steps failed; the latest{call}: {last['summary']}. "
        "Do not repeat it: use another tool, or the same tool with different arguments."
    )


def backoff_delay(attempt: int, settings: AgentSettings, rng: random.Random) -> float:
    """Exponential backoff with full jitter before retry number ``attempt`` (1-based)."""
    ceiling = min(settings.retry_max_delay, settings.retry_base_delay * 2 ** (attempt - 1))
    return rng.uniform(0, ceiling)
