"""The loop's decisions between steps: hints, refusals, temperature, rules, observations."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage
from tether import ToolRegistry, error, success, tool

from tests.scripts import act, broken, final, lookup


def prompt_of(model: Any, call: int) -> str:
    return "\n".join(m.text for m in model.calls[call].messages)


def test_switch_hint_after_two_failures_names_the_step(run_script: Any) -> None:
    replies = [
        act("broken", '{"key": "a"}'),
        act("broken", '{"key": "b"}'),
        final("stopped"),
    ]
    state, model = run_script(replies, tools=[broken, lookup])
    assert "Notes from the controller" not in prompt_of(model, 1)
    third = prompt_of(model, 2)
    notes = third.split("## Notes from the controller")[1]
    assert "step 2, broken tool error" in notes and "another tool" in notes
    assert "no record for b" not in notes  # the tool's words stay in its (quoted) result
    decisions = [e["detail"]["decision"] for e in state["trace"] if e["event"] == "decision"]
    assert decisions == ["continue", "switch", "stop"]


def test_call_that_failed_twice_is_refused_without_running(run_script: Any) -> None:
    runs: list[str] = []

    @tool
    def fragile(key: str) -> str:
        """Fails for key a."""
        runs.append(key)
        if key == "a":
            raise ValueError("bad key")
        return "fine"

    replies = [
        act("fragile", '{"key": "a"}'),
        act("fragile", '{"key": "b"}'),  # success in between
        act("fragile", '{"key": "a"}'),
        act("fragile", '{"key": "a"}'),  # failed on its last two runs: refused
        final("done"),
    ]
    state, model = run_script(replies, tools=[fragile])
    assert runs == ["a", "b", "a"]
    assert next(r for r in state["history"] if r["step"] == 4)["kind"] == "refused"
    assert "Refused" in prompt_of(model, 4)


def test_temperature_drops_after_three_successes_and_recovers_on_failure(
    run_script: Any,
) -> None:
    replies = [
        act("lookup", '{"key": "a"}'),
        act("lookup", '{"key": "b"}'),
        act("lookup", '{"key": "c"}'),
        act("broken", '{"key": "d"}'),
        act("lookup", '{"key": "e"}'),
        final("done"),
    ]
    state, model = run_script(replies, tools=[lookup, broken])
    temps = [call.kwargs["temperature"] for call in model.calls]
    assert temps == [0.3, 0.3, 0.3, 0.1, 0.3, 0.3]
    assert state["status"] == "completed"


def test_validation_error_goes_back_to_the_model_with_the_fields(run_script: Any) -> None:
    replies = [act("lookup", '{"kee": "a"}'), act("lookup", '{"key": "a"}'), final("ok")]
    state, model = run_script(replies, tools=[lookup])
    second = prompt_of(model, 1)
    assert "missing required field 'key'" in second
    assert state["history"][0]["kind"] == "validation_error"
    assert state["status"] == "completed"


def test_unknown_tool_lists_the_available_ones(run_script: Any) -> None:
    replies = [act("lokup", '{"key": "a"}'), final("ok")]
    state, model = run_script(replies, tools=[lookup, broken])
    assert "Available tools: broken, lookup" in prompt_of(model, 1)
    assert state["history"][0]["kind"] == "unknown_tool"


def test_parse_failure_restates_the_format_and_counts_as_failure(run_script: Any) -> None:
    replies = ["I think the answer is 4", final("4")]
    state, model = run_script(replies, tools=[lookup], check_final=False)
    assert state["parse_failures"] == 1
    assert state["history"][0]["kind"] == "parse_failure"
    assert "Final Answer:" in prompt_of(model, 1).split("Notes from the controller")[1]


def test_chinese_quotes_in_action_input_are_repaired(run_script: Any) -> None:
    state, _ = run_script([act("lookup", "{“key”: “订单”}"), final("ok")], tools=[lookup])
    assert state["tool_buffer"][0]["arguments"] == {"key": "订单"}
    assert state["history"][0]["kind"] == "success"


def test_low_confidence_result_is_a_failed_step(run_script: Any) -> None:
    @tool
    def guess(key: str) -> Any:
        """Guesses."""
        return success("maybe", confidence_score=0.2)

    state, model = run_script(
        [act("guess", '{"key": "a"}'), final("x")], tools=[guess], min_confidence=0.5
    )
    assert state["history"][0]["kind"] == "rule_failure"
    first_decision = next(e for e in state["trace"] if e["event"] == "decision")
    assert first_decision["detail"]["failure_streak"] == 1
    assert "below min_confidence 0.5" in prompt_of(model, 1)


def test_user_rule_can_stop_the_run(run_script: Any) -> None:
    def stop_on_secret(state: Any, result: Any, settings: Any) -> Any:
        if result and "secret" in str(result.get("data")):
            return {"action": "stop", "reason": "result contains a secret", "status": "failed"}
        return None

    state, model = run_script(
        [act("lookup", '{"key": "secret"}'), final("unused")],
        tools=[lookup],
        rules=(stop_on_secret,),
    )
    assert state["status"] == "failed"
    assert state["reason"] == "rule stop_on_secret: result contains a secret"
    assert len(model.calls) == 1


def test_user_rule_can_ask_for_a_retry(run_script: Any, sleeps: Any) -> None:
    seen: list[int] = []

    @tool
    def warming(key: str) -> Any:
        """Not ready at first."""
        seen.append(1)
        return success({"ready": len(seen) > 1})

    def retry_until_ready(state: Any, result: Any, settings: Any) -> Any:
        if result and result["status"] == "success" and not result["data"]["ready"]:
            return {"action": "retry", "reason": "not ready yet"}
        return None

    state, _ = run_script(
        [act("warming", '{"key": "a"}'), final("ok")],
        tools=[warming],
        rules=(retry_until_ready,),
    )
    assert len(seen) == 2
    assert len(sleeps.delays) == 1
    assert state["history"][0]["kind"] == "success"


def test_tools_added_and_removed_between_steps_show_in_the_next_prompt(
    run_script: Any,
) -> None:
    registry = ToolRegistry()

    @tool
    def unlock(key: str) -> str:
        """Adds the secret tool and removes itself."""
        registry.register(lookup)
        registry.unregister("unlock")
        return "unlocked"

    registry.register(unlock)
    replies = [act("unlock", '{"key": "a"}'), act("lookup", '{"key": "b"}'), final("ok")]
    state, model = run_script(replies, tools=registry)
    assert "- unlock:" in prompt_of(model, 0) and "- lookup:" not in prompt_of(model, 0)
    assert "- lookup:" in prompt_of(model, 1) and "- unlock:" not in prompt_of(model, 1)
    assert state["status"] == "completed"
    assert registry.stats("unlock").usage_count == 1  # stats outlive unregistering


def test_missing_server_usage_is_counted_and_said(run_script: Any) -> None:
    state, _ = run_script([final("ok")], usage=False)
    assert state["usage"]["total_tokens"] > 0
    events = [e["event"] for e in state["trace"]]
    assert "usage_counted" in events


def test_buffers_keep_their_windows(run_script: Any) -> None:
    replies = [act("lookup", f'{{"key": "k{i}"}}') for i in range(8)] + [final("ok")]
    state, _ = run_script(replies, tools=[lookup], max_steps=20)
    assert [e["step"] for e in state["reasoning_buffer"]] == [4, 5, 6, 7, 8, 9]
    assert [e["step"] for e in state["tool_buffer"]] == [6, 7, 8]


def test_native_protocol_uses_tool_calls(run_script: Any) -> None:
    call = AIMessage(
        "", tool_calls=[{"name": "lookup", "args": {"key": "a"}, "id": "c1", "type": "tool_call"}]
    )
    state, model = run_script(
        [call, AIMessage("the value of a")], tools=[lookup], protocol="native"
    )
    assert state["status"] == "completed"
    assert state["answer"] == "the value of a"
    assert model.calls[0].kwargs["tools"] == ["lookup"]
    assert state["tool_buffer"][0]["result"]["data"] == "value of a"


def test_a_tools_own_error_type_still_counts_as_a_failed_step(run_script: Any) -> None:
    @tool
    def cancel(order_id: str) -> Any:
        """Refuses: the order has shipped."""
        return error("ORD-1 has shipped and cannot be cancelled", error_type="refused")  # type: ignore[arg-type]

    replies = [act("cancel", '{"order_id": "ORD-1"}')] * 2 + [final("x")]
    state, _ = run_script(replies, tools=[cancel])
    kinds = [r["kind"] for r in state["history"]]
    assert kinds == ["tool_error", "tool_error", "final"]
