"""Each way a run can end, driven end to end through the compiled graph."""

from __future__ import annotations

from typing import Any, get_args

import pytest
from tether import STATUSES, Status, TransientToolError, tool
from tether.state import TERMINAL_STATUSES

from tests.scripts import act, broken, final, lookup


def test_final_answer_completes(run_script: Any) -> None:
    state, model = run_script(
        [act("lookup", '{"key": "a"}'), final("the value is a")], tools=[lookup]
    )
    assert state["status"] == "completed"
    assert state["answer"] == "the value is a"
    assert state["steps"] == 2
    assert "final answer" in state["reason"]
    assert len(model.calls) == 2


def test_step_cap_is_max_steps_never_completed(run_script: Any) -> None:
    replies = [act("lookup", f'{{"key": "k{i}"}}') for i in range(3)]
    state, model = run_script(replies, tools=[lookup], max_steps=3)
    assert state["status"] == "max_steps"
    assert state["answer"] is None
    assert "3 model calls" in state["reason"]
    assert len(model.calls) == 3


def test_budget_passed_after_a_call_is_partial(run_script: Any) -> None:
    # The first prompt fits the budget, but spending it leaves the total over.
    state, model = run_script(
        [act("lookup", '{"key": "a"}', thought="x " * 300), final("never reached")],
        tools=[lookup],
        token_budget=400,
    )
    assert state["status"] == "partial"
    spent = state["usage"]["total_tokens"]
    assert spent > 400
    assert "400" in state["reason"] and str(spent) in state["reason"]
    assert len(model.calls) == 1


def test_budget_checked_before_the_call(run_script: Any) -> None:
    state, model = run_script([final("unused")], tools=[lookup], token_budget=50)
    assert state["status"] == "partial"
    assert model.calls == []  # nothing was spent
    assert state["usage"]["total_tokens"] == 0
    assert "would be exceeded" in state["reason"]


def test_breaker_opens_after_three_failures(run_script: Any) -> None:
    replies = [act("broken", f'{{"key": "k{i}"}}') for i in range(3)]
    state, _ = run_script(replies, tools=[broken])
    assert state["status"] == "failed"
    assert "3 consecutive failed steps" in state["reason"]
    for i in range(3):
        assert f"no record for k{i}" in state["reason"]


def test_mixed_failures_trip_the_breaker(run_script: Any) -> None:
    replies = [
        act("nope", '{"key": "a"}'),  # unknown tool
        "Thought: hmm, no action",  # parse failure
        act("lookup", '{"wrong": 1}'),  # validation error
    ]
    state, _ = run_script(replies, tools=[lookup])
    assert state["status"] == "failed"
    kinds = [r["kind"] for r in state["history"]]
    assert kinds == ["unknown_tool", "parse_failure", "validation_error"]


def test_same_call_three_times_is_no_progress(run_script: Any) -> None:
    calls: list[str] = []

    @tool
    def counted(key: str) -> str:
        """Counts its runs."""
        calls.append(key)
        return "same answer"

    replies = [act("counted", '{"key": "a"}')] * 3
    state, _ = run_script(replies, tools=[counted])
    assert state["status"] == "no_progress"
    assert "counted" in state["reason"]
    assert calls == ["a", "a"]  # the third identical call is not run


def test_repeated_thought_without_action_is_no_progress(run_script: Any) -> None:
    thought = "Thought: I need to check the order status..."
    state, model = run_script([thought, thought, final("unused")], tools=[lookup])
    assert state["status"] == "no_progress"
    assert "same Thought" in state["reason"]
    assert len(model.calls) == 2


def test_every_status_has_a_reason(run_script: Any) -> None:
    state, _ = run_script([final("ok")])
    assert state["reason"]


def test_the_status_table_has_every_status_once_in_order() -> None:
    assert tuple(STATUSES) == get_args(Status)
    for status, info in STATUSES.items():
        assert info.status == status
        assert info.meaning and "\n" not in info.meaning and "|" not in info.meaning
    assert {s for s, info in STATUSES.items() if info.exit_code != 3} == TERMINAL_STATUSES


def test_each_status_has_the_clis_exit_code() -> None:
    codes = {status: info.exit_code for status, info in STATUSES.items()}
    assert codes == {
        "running": 3,  # not ended: saved, waiting
        "completed": 0,
        "partial": 1,
        "failed": 1,
        "max_steps": 1,
        "no_progress": 1,
        "cancelled": 1,
    }


@pytest.mark.parametrize("attempts_failing", [1, 2])
def test_transient_failures_are_retried_in_place(
    run_script: Any, sleeps: Any, attempts_failing: int
) -> None:
    runs: list[int] = []

    @tool
    def flaky(key: str) -> str:
        """Fails transiently at first."""
        runs.append(1)
        if len(runs) <= attempts_failing:
            raise TransientToolError("503 from upstream")
        return "ok"

    state, model = run_script([act("flaky", '{"key": "a"}'), final("ok")], tools=[flaky])
    assert state["status"] == "completed"
    assert len(runs) == attempts_failing + 1
    assert len(model.calls) == 2  # retries do not cost model calls
    assert state["tool_retries"] == attempts_failing
    assert len(sleeps.delays) == attempts_failing
    for n, delay in enumerate(sleeps.delays, start=1):
        assert 0 <= delay <= min(8.0, 0.5 * 2 ** (n - 1))
    assert state["history"][0]["kind"] == "success"


def test_transient_failure_after_all_attempts_is_a_failed_step(
    run_script: Any, sleeps: Any
) -> None:
    @tool
    def down(key: str) -> str:
        """Always times out."""
        raise TimeoutError("upstream timed out")

    state, _ = run_script(
        [act("down", '{"key": "a"}'), final("gave up")], tools=[down], tool_attempts=3
    )
    assert state["history"][0]["kind"] == "transient"
    assert len(sleeps.delays) == 2
    assert state["tool_buffer"][0]["result"]["meta"]["retry_count"] == 2


def test_non_transient_error_is_not_retried(run_script: Any, sleeps: Any) -> None:
    state, _ = run_script([act("broken", '{"key": "a"}'), final("x")], tools=[broken])
    assert sleeps.delays == []
    assert state["history"][0]["kind"] == "tool_error"
