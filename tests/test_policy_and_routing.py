"""Routing functions and policy checks in isolation: plain state in, decision out."""

from __future__ import annotations

import random
from typing import Any

import pytest

from tether import AgentSettings
from tether.graph import policy, routing

SETTINGS = AgentSettings()


def rec(kind: str, step: int = 1, fp: str | None = "t{}", summary: str = "s") -> dict[str, Any]:
    return {"step": step, "kind": kind, "summary": summary, "fingerprint": fp}


def action(fp: str = 'lookup{"key":"a"}') -> dict[str, Any]:
    return {"kind": "action", "thought": "", "tool": "lookup", "arguments": {}, "fingerprint": fp}


# --- route_after_think ----------------------------------------------------------------------
def test_final_and_invalid_go_to_assess() -> None:
    for kind in ("final", "invalid"):
        state: Any = {"proposal": {"kind": kind, "thought": ""}}
        assert routing.route_after_think(state, SETTINGS) == "assess"


def test_fresh_action_goes_to_act() -> None:
    assert routing.route_after_think({"proposal": action()}, SETTINGS) == "act"


def test_action_that_failed_twice_is_refused() -> None:
    fp = 'lookup{"key":"a"}'
    state: Any = {
        "proposal": action(fp),
        "history": [rec("tool_error", 1, fp), rec("success", 2, "other"), rec("tool_error", 3, fp)],
        "executed": [fp, "other", fp],
    }
    assert routing.route_after_think(state, SETTINGS) == "refuse"


def test_action_that_failed_then_succeeded_is_not_refused() -> None:
    fp = 'lookup{"key":"a"}'
    state: Any = {
        "proposal": action(fp),
        "history": [rec("tool_error", 1, fp), rec("success", 2, fp)],
        "executed": [fp, fp],
    }
    assert not policy.should_refuse(state, fp)


def test_third_identical_call_goes_to_assess_as_a_repeat() -> None:
    fp = 'lookup{"key":"a"}'
    state: Any = {"proposal": action(fp), "executed": [fp, fp], "history": []}
    assert routing.route_after_think(state, SETTINGS) == "assess"
    assert routing.route_after_think(state, AgentSettings(repeat_limit=4)) == "act"


# --- route_after_act ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("meta", "status", "attempts", "expected"),
    [
        ({"transient": True}, "error", 1, "act"),
        ({"transient": True}, "error", 3, "assess"),
        ({"transient": False}, "error", 1, "assess"),
        ({"rule": {"action": "retry"}}, "success", 1, "act"),
        ({"rule": {"action": "switch"}}, "success", 1, "assess"),
        ({}, "success", 1, "assess"),
    ],
)
def test_route_after_act(meta: dict[str, Any], status: str, attempts: int, expected: str) -> None:
    state: Any = {"result": {"status": status, "meta": meta}, "tool_attempts": attempts}
    assert routing.route_after_act(state, SETTINGS) == expected


# --- verdict-driven routes ------------------------------------------------------------------
def test_routes_follow_the_recorded_verdict() -> None:
    stop: Any = {"verdict": {"status": "failed", "reason": "x"}}
    assert routing.route_after_assess(stop, SETTINGS) == "finish"
    assert routing.route_after_compose(stop, SETTINGS) == "finish"
    assert routing.route_after_assess({"verdict": None}, SETTINGS) == "compose"
    assert routing.route_after_compose({}, SETTINGS) == "think"


# --- policy.after_step ----------------------------------------------------------------------
def test_breaker_needs_consecutive_failures() -> None:
    broken = [rec("tool_error"), rec("success"), rec("tool_error"), rec("parse_failure", fp=None)]
    assert policy.breaker(broken, SETTINGS) is None
    tripped = policy.breaker([*broken, rec("unknown_tool", 5, summary="no such tool")], SETTINGS)
    assert tripped and tripped["status"] == "failed" and "no such tool" in tripped["reason"]


def test_final_answer_wins_over_the_step_cap() -> None:
    state: Any = {"history": [rec("final", 10)], "steps": 10}
    verdict = policy.after_step(state, AgentSettings(max_iters=10))
    assert verdict and verdict["status"] == "completed"


def test_step_cap_gives_max_steps() -> None:
    state: Any = {"history": [rec("success", 10)], "steps": 10}
    verdict = policy.after_step(state, AgentSettings(max_iters=10))
    assert verdict and verdict["status"] == "max_steps"
    assert policy.after_step({**state, "steps": 9}, AgentSettings(max_iters=10)) is None


def test_budget_is_exceeded_only_past_the_limit() -> None:
    at: Any = {"usage": {"input_tokens": 90, "output_tokens": 10, "total_tokens": 100}}
    assert policy.over_budget(at, AgentSettings(token_budget=100)) is None
    verdict = policy.over_budget(at, AgentSettings(token_budget=99))
    assert verdict and verdict["status"] == "partial" and "spent 100" in verdict["reason"]


def test_pre_call_check_counts_the_estimate() -> None:
    state: Any = {"usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 80}}
    assert policy.before_call(state, AgentSettings(token_budget=100), 20) is None
    verdict = policy.before_call(state, AgentSettings(token_budget=100), 21)
    assert verdict and "next prompt ~21" in verdict["reason"]


def test_repeated_thought_needs_two_identical_in_a_row() -> None:
    same = rec("parse_failure", fp="thought:i need to check")
    assert policy.repeated_thought([same, same])
    assert not policy.repeated_thought([same, rec("success"), same])
    assert not policy.repeated_thought([rec("parse_failure", fp=None)] * 2)


def test_temperature_and_switch_thresholds() -> None:
    settings = AgentSettings(calm_after_successes=3, switch_after_failures=2)
    assert policy.temperature_for(2, settings) == settings.temperature
    assert policy.temperature_for(3, settings) == settings.calm_temperature
    assert policy.switch_hint([rec("tool_error")], settings) is None
    hint = policy.switch_hint([rec("tool_error"), rec("tool_error", fp="x{}")], settings)
    assert hint and "x{}" in hint


def test_backoff_is_exponential_capped_and_jittered() -> None:
    settings = AgentSettings(retry_base_delay=0.5, retry_max_delay=8.0)
    rng = random.Random(1)
    for attempt, ceiling in [(1, 0.5), (2, 1.0), (3, 2.0), (6, 8.0), (10, 8.0)]:
        delays = [policy.backoff_delay(attempt, settings, rng) for _ in range(200)]
        assert all(0 <= d <= ceiling for d in delays)
        assert max(delays) > ceiling * 0.8  # jitter spreads over the whole range
