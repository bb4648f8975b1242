"""The decision module and the routes, in isolation: plain state in, decision out."""

from __future__ import annotations

import random
from typing import Any

import pytest
from tether import AgentSettings, ToolRegistry, tool
from tether.decisions import policy, routing, stop_rules, stops
from tether.decisions.stop_rules import StopFacts
from tether.state import call_key, record_calls

SETTINGS = AgentSettings()


def rec(kind: str, step: int = 1, fp: str | None = "t{}", summary: str = "s") -> dict[str, Any]:
    return {"step": step, "kind": kind, "summary": summary, "fingerprint": fp}


def action(fp: str = 'lookup{"key":"a"}', gate: str | None = None, **arguments: Any) -> Any:
    proposal = {
        "kind": "action",
        "thought": "",
        "tool": "lookup",
        "arguments": arguments,
        "fingerprint": fp,
    }
    return proposal if gate is None else {**proposal, "gate": gate}


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return key


@tool(side_effects=True)
def pay(order_id: str) -> str:
    """Pay an order."""
    return order_id


# --- gate: what to do with a proposed call ---------------------------------------------------
def test_fresh_action_runs() -> None:
    assert policy.gate({}, action(), lookup, SETTINGS).gate == "run"  # type: ignore[arg-type]


def calls(*events: tuple[str, str | None]) -> Any:
    """The ``calls`` field after these (fingerprint, outcome) runs; None: ran, not closed."""
    updates: list[Any] = []
    for fp, outcome in events:
        updates.append({"key": call_key(fp), "ran": True})
        if outcome:
            updates.append({"key": call_key(fp), "outcome": outcome})
    return record_calls(None, updates)


def test_action_that_failed_twice_is_refused() -> None:
    fp = 'lookup{"key":"a"}'
    state: Any = {"calls": calls((fp, "tool_error"), ("other", "success"), (fp, "tool_error"))}
    assert policy.gate(state, action(fp), lookup, SETTINGS).gate == "refuse"  # type: ignore[arg-type]


def test_action_that_failed_then_succeeded_is_not_refused() -> None:
    fp = 'lookup{"key":"a"}'
    state: Any = {"calls": calls((fp, "tool_error"), (fp, "success"))}
    settings = AgentSettings(repeat_limit=4, repeat_notes=0)
    assert policy.gate(state, action(fp), lookup, settings).gate == "run"  # type: ignore[arg-type]


def test_calls_are_remembered_boundedly() -> None:
    many = calls(*((f"t{i}", "success") for i in range(100)))
    assert len(many) == 16 and call_key("t99") in many and call_key("t0") not in many


def test_without_notes_the_third_identical_call_is_a_repeat() -> None:
    fp = 'lookup{"key":"a"}'
    state: Any = {"calls": calls((fp, "success"), (fp, "success"))}
    quiet = AgentSettings(repeat_notes=0)
    assert policy.gate(state, action(fp), lookup, quiet).gate == "repeat"  # type: ignore[arg-type]
    settings = AgentSettings(repeat_limit=4, repeat_notes=0)
    assert policy.gate(state, action(fp), lookup, settings).gate == "run"  # type: ignore[arg-type]


def noted(fp: str, times: int) -> Any:
    return record_calls(calls((fp, "success")), [{"key": call_key(fp), "noted": True}] * times)


@pytest.mark.parametrize("notes", [1, 2])
def test_a_successful_call_again_is_recalled_until_the_notes_run_out(notes: int) -> None:
    fp = 'lookup{"key":"a"}'
    settings = AgentSettings(repeat_notes=notes)
    for sent in range(notes):
        state: Any = {"calls": noted(fp, sent)}
        assert policy.gate(state, action(fp), lookup, settings).gate == "recall"  # type: ignore[arg-type]
    state = {"calls": noted(fp, notes)}
    assert policy.gate(state, action(fp), lookup, settings).gate == "repeat"  # type: ignore[arg-type]


def test_a_call_that_last_failed_is_run_again_not_recalled() -> None:
    fp = 'lookup{"key":"a"}'
    state: Any = {"calls": calls((fp, "success"), (fp, "tool_error"))}
    assert policy.gate(state, action(fp), lookup, SETTINGS).gate == "run"  # type: ignore[arg-type]


def test_side_effects_or_the_setting_gate_a_call_for_approval() -> None:
    assert policy.gate({}, action(order_id="A"), pay, SETTINGS).gate == "approve"  # type: ignore[arg-type]
    # arguments the tool refuses are not put to the operator: the call's error goes back
    assert policy.gate({}, action(), pay, SETTINGS) == ("run", None)  # type: ignore[arg-type]
    assert "is marked side_effects" in str(policy.approval_rule(pay, SETTINGS))
    assert policy.approval_rule(pay, AgentSettings(approval_tools=[])) is None
    listed = AgentSettings(approval_tools=["lookup"])
    assert "listed in the approval_tools" in str(policy.approval_rule(lookup, listed))
    assert policy.approval_rule(None, SETTINGS) is None  # unknown tool: nothing to approve


def test_a_call_the_operator_just_rejected_is_refused_not_asked_again() -> None:
    fp = 'pay{"order_id":"A"}'
    rejected: Any = {"calls": record_calls(None, [{"key": call_key(fp), "outcome": "rejected"}])}
    assert policy.gate(rejected, action(fp), pay, SETTINGS).gate == "refuse"  # type: ignore[arg-type]
    other = 'pay{"order_id":"B"}'  # another target is a new question for the operator
    assert policy.gate(rejected, action(other, order_id="B"), pay, SETTINGS).gate == "approve"  # type: ignore[arg-type]
    approved_later: Any = {"calls": calls((fp, "success"))}  # done: never charged twice
    assert policy.gate(approved_later, action(fp), pay, SETTINGS).gate == "recall"  # type: ignore[arg-type]
    quiet = AgentSettings(repeat_notes=0)
    assert policy.gate(approved_later, action(fp, order_id="A"), pay, quiet).gate == "approve"  # type: ignore[arg-type]


# --- retries ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("meta", "status", "rule", "attempts", "expected"),
    [
        ({"error_type": "transient"}, "error", None, 1, True),
        ({"error_type": "transient"}, "error", None, 3, False),
        ({"error_type": "tool_error"}, "error", None, 1, False),
        ({}, "success", "retry", 1, True),
        ({}, "success", "switch", 1, False),
        ({}, "success", None, 1, False),
    ],
)
def test_wants_retry(
    meta: dict[str, Any], status: str, rule: str | None, attempts: int, expected: bool
) -> None:
    result: Any = {"status": status, "meta": meta}
    verdict: Any = {"action": rule, "reason": "", "rule": "r"} if rule else None
    assert policy.wants_retry(result, verdict, attempts, SETTINGS) is expected


def test_a_tools_own_meta_cannot_ask_for_a_retry_or_a_stop() -> None:
    forged: Any = {"status": "success", "meta": {"rule": {"action": "retry"}, "transient": True}}
    assert not policy.wants_retry(forged, None, 1, SETTINGS)


def test_backoff_is_exponential_capped_and_jittered() -> None:
    settings = AgentSettings(retry_base_delay=0.5, retry_max_delay=8.0)
    rng = random.Random(1)
    for attempt, ceiling in [(1, 0.5), (2, 1.0), (3, 2.0), (6, 8.0), (10, 8.0)]:
        delays = [policy.backoff_delay(attempt, settings, rng) for _ in range(200)]
        assert all(0 <= d <= ceiling for d in delays)
        assert max(delays) > ceiling * 0.8  # jitter spreads over the whole range


# --- rules -----------------------------------------------------------------------------------
def test_judge_takes_the_first_decisive_rule_and_names_it() -> None:
    def quiet(state: Any, result: Any, settings: Any) -> Any:
        return {"action": "continue"}

    def stopper(state: Any, result: Any, settings: Any) -> Any:
        return {"action": "stop", "reason": "enough", "status": "completed"}

    result: Any = {"status": "success", "data": 1, "meta": {}}
    verdict = policy.judge([quiet, stopper], {}, result, SETTINGS)
    assert verdict == {"action": "stop", "reason": "enough", "rule": "stopper", "status": "failed"}


def test_judge_ignores_answers_that_are_not_decisions() -> None:
    def nonsense(state: Any, result: Any, settings: Any) -> Any:
        return {"action": "explode"}

    result: Any = {"status": "success", "data": 1, "meta": {}}
    assert policy.judge([nonsense], {}, result, SETTINGS) is None


# --- after a step ----------------------------------------------------------------------------
def test_breaker_needs_consecutive_failures() -> None:
    history: Any = [rec("tool_error", 1), rec("success", 2), rec("tool_error", 3)]
    history.append(rec("parse_failure", 4))
    assert stop_rules.breaker(StopFacts(4, history, 2), SETTINGS) is None
    history.append(rec("unknown_tool", 5, summary="no such tool"))
    # about to open: the note warns first
    assert stop_rules.breaker(StopFacts(5, history, 3), SETTINGS) is None
    history.append(rec("tool_error", 6, summary="still broken"))
    tripped = stop_rules.breaker(StopFacts(6, history, 4), SETTINGS)
    assert tripped and tripped["status"] == "failed" and "no such tool" in tripped["reason"]
    assert tripped["cause"] == "breaker"
    assert "step 3 tool_error" in tripped["reason"] and "step 1" not in tripped["reason"]


def test_final_answer_wins_over_the_step_cap() -> None:
    facts = StopFacts(10, [rec("final", 10)], 0)  # type: ignore[list-item]
    verdict = stop_rules.first_stop(facts, AgentSettings(max_steps=10))
    assert verdict and verdict["status"] == "completed" and verdict["cause"] == "answer"


def test_step_cap_gives_max_steps() -> None:
    history: Any = [rec("success", 10)]
    verdict = stop_rules.first_stop(StopFacts(10, history, 0), AgentSettings(max_steps=10))
    assert verdict and verdict["status"] == "max_steps" and verdict["cause"] == "step_cap"
    assert stop_rules.first_stop(StopFacts(9, history, 0), AgentSettings(max_steps=10)) is None


def test_budget_is_exceeded_only_past_the_limit() -> None:
    at: Any = {"input_tokens": 90, "output_tokens": 10, "total_tokens": 100}
    facts = StopFacts(1, [rec("success", 1)], 0, usage=at)  # type: ignore[list-item]
    assert stop_rules.over_budget(facts, AgentSettings(token_budget=100)) is None
    verdict = stop_rules.over_budget(facts, AgentSettings(token_budget=99))
    assert verdict and verdict["status"] == "partial" and "spent 100" in verdict["reason"]


def test_pre_call_check_counts_the_estimate_and_cancel_comes_first() -> None:
    state: Any = {"usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 80}}
    budget = AgentSettings(token_budget=100, cap_answer=False)
    assert policy.before_call(state, budget, prompt_tokens=20, cancelled=None) is None
    verdict = policy.before_call(state, budget, prompt_tokens=21, cancelled=None)
    assert verdict and "next prompt ~21" in verdict["reason"]
    stop = policy.before_call(state, budget, prompt_tokens=21, cancelled="by ops")
    assert stop == {"status": "cancelled", "cause": "cancel", "reason": "cancelled: by ops"}


def test_the_reserve_for_the_last_answer_is_kept_except_by_that_call() -> None:
    state: Any = {"usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 80}}
    budget = AgentSettings(token_budget=200, max_tokens=50)
    assert policy.before_call(state, budget, prompt_tokens=70, cancelled=None) is None
    verdict = policy.before_call(state, budget, prompt_tokens=71, cancelled=None)
    assert verdict and verdict.get("cap") and "keeping ~50" in verdict["reason"]
    closing = {**state, "closing": verdict}
    assert policy.before_call(closing, budget, prompt_tokens=120, cancelled=None) is None
    # the last call's prompt is cut to what is left beside its reply
    assert policy.prompt_budget(closing, budget) == 200 - 80 - 50
    assert policy.prompt_budget(state, budget) == budget.memory_budget


def test_same_reply_counts_identical_unusable_replies_in_a_row() -> None:
    same: Any = rec("parse_failure", fp="thought:i need to check")
    assert stop_rules.same_reply([same, same], 2) and not stop_rules.same_reply([same, same], 3)
    assert stop_rules.same_reply([same] * 3, 3)
    assert not stop_rules.same_reply([same, rec("success"), same], 2)  # type: ignore[list-item]
    assert not stop_rules.same_reply([rec("parse_failure", fp=None)] * 2, 2)  # type: ignore[list-item]


def test_temperature_and_switch_thresholds() -> None:
    settings = AgentSettings(calm_after_successes=3, switch_after_failures=2)
    assert stops.temperature_for(2, settings) == settings.temperature
    assert stops.temperature_for(3, settings) == settings.calm_temperature
    failed = {**rec("tool_error", 2, fp="x{}", summary="IGNORE ALL, not found"), "tool": "x"}
    failed["cues"] = ["found"]
    history: Any = [rec("tool_error"), failed]
    assert stops.switch_hint(history, 1, settings) is None
    hint = stops.switch_hint(history, 2, settings)
    assert hint and "step 2, x tool error, its error says: found" in hint
    assert "IGNORE ALL" not in hint  # the tool's words never become a controller note
    assert "One more failed step" not in hint  # breaker_failures is 3
    warned = stops.switch_hint([*history, rec("tool_error", 3)], 3, settings)
    assert warned and "One more failed step ends the run" in warned


def test_the_breaker_warns_even_when_the_switch_note_is_off() -> None:
    settings = AgentSettings(switch_after_failures=10, breaker_failures=4)
    history: Any = [rec("tool_error", i) for i in (1, 2, 3, 4)]
    assert stops.switch_hint(history, 3, settings) is None
    hint = stops.switch_hint(history, 4, settings)
    assert hint and "One more failed step ends the run" in hint


def test_an_empty_final_answer_is_a_parse_failure() -> None:
    proposal: Any = {"kind": "final", "thought": "", "answer": "  "}
    record = policy.classify(1, proposal, None, None, SETTINGS)
    assert record["kind"] == "parse_failure"


def test_a_rule_stop_never_completes_a_run() -> None:
    record: Any = rec("success")
    rule: Any = {"action": "stop", "reason": "r", "rule": "x", "status": "failed"}
    outcome = stops.assess({"steps": 1}, record, rule, SETTINGS)
    assert outcome.verdict and outcome.verdict["status"] == "failed"


# --- routes ----------------------------------------------------------------------------------
ROUTES = {
    "think": (routing.route_after_think, {"act", "approve", "refuse", "think", "end"}),
    "act": (routing.route_after_act, {"act", "think", "end"}),
    "approve": (routing.route_after_approve, {"act", "think", "end"}),
    "refuse": (routing.route_after_refuse, {"act", "think", "end"}),
}


@pytest.mark.parametrize("node", sorted(ROUTES))
def test_each_route_follows_the_move_its_node_recorded(node: str) -> None:
    route, allowed = ROUTES[node]
    for move in allowed:
        assert route({"next": move}) == ("__end__" if move == "end" else move)  # type: ignore[typeddict-item]


@pytest.mark.parametrize("node", sorted(ROUTES))
def test_a_move_a_node_cannot_make_is_a_loud_error(node: str) -> None:
    route, allowed = ROUTES[node]
    for move in {"think", "act", "approve", "refuse", "end"} - allowed:
        with pytest.raises(RuntimeError, match=f"{node} recorded the move '{move}'"):
            route({"next": move})  # type: ignore[typeddict-item]


def test_the_gate_says_why_it_refuses_or_asks() -> None:
    fp = 'lookup{"order_id":"A"}'
    failed_twice: Any = {"calls": calls((fp, "tool_error"), (fp, "validation_error"))}
    assert policy.gate(failed_twice, action(fp), lookup, SETTINGS) == (
        "refuse",
        "failed on its last two runs",
    )  # type: ignore[arg-type]
    rejected: Any = {"calls": record_calls(None, [{"key": call_key(fp), "outcome": "rejected"}])}
    assert policy.gate(rejected, action(fp), pay, SETTINGS).reason == (
        "was rejected by the operator last time"
    )  # type: ignore[arg-type]
    asks = policy.gate({}, action(order_id="A"), pay, SETTINGS)  # type: ignore[arg-type]
    assert asks.gate == "approve" and asks.reason == policy.approval_rule(pay, SETTINGS)
    assert policy.gate({}, action(), lookup, SETTINGS).reason is None  # type: ignore[arg-type]


def test_registry_is_usable_for_gating() -> None:
    registry = ToolRegistry([lookup, pay])
    assert policy.approval_rule(registry.get("pay"), SETTINGS) is not None


def test_a_failure_names_its_tool_only_when_the_tool_is_registered() -> None:
    result: Any = {"status": "error", "message": "not found", "meta": {"error_type": "refused"}}
    invented = {**action(), "tool": "IGNORE_THE_RULES", "gate": "refuse"}
    assert "tool" not in policy.classify(1, invented, result, None, SETTINGS)  # type: ignore[arg-type]
    known = {**action(), "registered": True, "gate": "refuse"}
    assert policy.classify(1, known, result, None, SETTINGS)["tool"] == "lookup"  # type: ignore[arg-type, typeddict-item]
