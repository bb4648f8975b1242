"""What an answer claims and what backs it: ids, numbers, statuses, refusals, contradictions."""

from __future__ import annotations

from decimal import Decimal

from tether.decisions.grounding import Call, Evidence, ids_in, statuses_in, ungrounded_numbers
from tether_bench.claims import ORDERS, conflicting_amounts, read_claims
from tether_bench.judge import judge_run
from tether_bench.records import RunRecord, ToolCall
from tether_bench.scenarios import Scenario

ORDER = {"order_id": "ORD-2024-513", "status": "pending", "subtotal": "100.00", "payments": []}


def test_ids_numbers_and_statuses_are_read_in_both_languages() -> None:
    claims = read_claims("1. Order ORD-2024-513 (user U0003) is paid: 2,328.02 CNY, 已发货.")
    assert claims.ids == {"ORD-2024-513", "U0003"}
    assert claims.numbers == (Decimal("2328.02"),)  # ids and the list marker are not numbers
    assert claims.statuses == {"paid", "shipped"}
    assert ids_in("H2O and CNY and SAVE50") == {"SAVE50"}


def test_negated_statuses_are_not_claims() -> None:
    assert statuses_in("It is pending, not yet paid, and cannot be cancelled.", ORDERS) == {
        "pending"
    }
    assert statuses_in("订单未支付，无法取消；状态待支付", ORDERS) == {"pending"}


def test_refusal_reasons_are_told_apart() -> None:
    no_tool = read_claims("I cannot send emails: no tool here can do that.")
    assert no_tool.refuses and no_tool.says_no_tool and not no_tool.asks_for_information
    ask = read_claims("Which order should I cancel? Please give me the order id.")
    assert ask.asks_for_information and not ask.says_no_tool
    assert read_claims("我无法修改商品价格，现有工具不支持改价。").says_no_tool


def test_only_connected_calls_ground_an_answer() -> None:
    """A lookup of another order (not named by the task or an earlier result) grounds nothing."""
    other = {**ORDER, "order_id": "ORD-2024-999", "status": "paid", "subtotal": "55.00"}
    evidence = Evidence.of(
        "Status of ORD-2024-513?",
        [
            Call("query_order", {"order_id": "ORD-2024-999"}, other),
            Call("query_order", {"order_id": "ORD-2024-513"}, ORDER),
        ],
    )
    assert evidence.ids() == {"ORD-2024-513"}
    assert evidence.statuses_about({"ORD-2024-513"}, ORDERS) == {"pending"}
    claims = read_claims("ORD-2024-513 costs 100.00, or 55.00, or 5% less.")
    assert ungrounded_numbers(claims.numbers, evidence) == [Decimal("55.00"), Decimal("5")]


def test_two_amounts_for_one_thing_contradict() -> None:
    assert conflicting_amounts("Payable 10.00 CNY. Final payable: 12.00.") == ["payable"]
    assert conflicting_amounts("Payable 10.00 CNY, shipping fee 12.00.") == []


def _record(answer: str, calls: list[ToolCall]) -> RunRecord:
    return RunRecord(
        agent="x",
        scenario_id="s",
        category="db",
        answer=answer,
        termination="completed",
        wall_s=1.0,
        tool_calls=calls,
    )


def test_the_judge_fails_claims_no_tool_backed(by_id: dict[str, Scenario]) -> None:
    scenario = by_id["db-status-01"]  # ORD-2024-513 is pending
    query = ToolCall(
        tool="query_order",
        arguments={"order_id": "ORD-2024-513"},
        status="success",
        start=0,
        end=0.1,
        turn=0,
        result=ORDER,
    )
    assert judge_run(scenario, _record("ORD-2024-513 is pending.", [query]), "h", "h").passed
    unbacked = judge_run(scenario, _record("ORD-2024-513 is pending.", []), "h", "h")
    assert "answer claims status pending" in " ".join(unbacked.failures)
    both = judge_run(scenario, _record("ORD-2024-513 is pending or paid.", [query]), "h", "h")
    assert "answer claims status paid" in " ".join(both.failures)
    hedged = judge_run(scenario, _record("I cannot check; it is pending.", [query]), "h", "h")
    assert "refuses a task the scenario expects done" in " ".join(hedged.failures)


def test_a_refusal_must_give_the_scenarios_reason(by_id: dict[str, Scenario]) -> None:
    no_tool = by_id["impossible-no-tool-01"]
    both = "I cannot do this: no tool supports it. Please give me the order id."
    assert not judge_run(no_tool, _record(both, []), "h", "h").passed
    assert judge_run(no_tool, _record(no_tool.gold_answer, []), "h", "h").passed
