"""The simulator's fact reader: numbers in every written form, one-step derivations, and no
false positives (simulator/written.py and simulator/facts.py)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from tether_bench.agents import ChatSettings, make_agent
from tether_bench.harness import Harness
from tether_bench.judge import Judge
from tether_bench.scenarios import NumberOutput, Scenario, ToolAction
from tether_bench.simulator import PERFECT, LatencyModel, Simulator, SimulatorServer, model_name
from tether_bench.simulator.facts import (
    derived_numbers,
    known_numbers,
    missing_arguments,
    output_fact,
    visible,
)
from tether_bench.simulator.reading import PromptView, read_request
from tether_bench.simulator.written import as_number, numbers, plain
from tether_bench.worlds import ExpectedStates, WorldFactory, prepare


def view(text: str) -> PromptView:
    return read_request({"messages": [{"role": "user", "content": text}]})


def shows(value: Any, text: str) -> bool:
    return visible(value, view(text))


# --- written forms ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("The order comes to 12,500 CNY", "12500"),
        ("Pay 1,888.00 now", "1888.00"),
        ("Pay 1,888.00 now", "1888"),  # by value
        ("a budget of 1,234,567.5 yuan", "1234567.50"),
        ("the fee is 12 500", "12500"),
        ("the fee is 12\u00a0500 and 3\u202f000", "3000"),  # no-break and narrow spaces
        ("应付 １２，５００ 元", "12500"),  # full-width digits and comma
        ("应付 ２３２８．０２ 元", "2328.02"),  # full-width full stop
        ("the total is 2328.02.", "2328.02"),
        ("the total is 2328.02.", "2328.020"),
        ("the total is 2,328.02.", "2328.02"),
        ("Pay it: 2328.", "2328"),
        ("总计 2328.02。", "2328.02"),
        ("(2328.02), then [15].", "15"),
        ("a refund of -12,500.50.", "-12500.5"),
    ],
)
def test_numbers_are_read_in_every_written_form(text: str, value: str) -> None:
    assert shows(value, text)
    assert Decimal(value) in numbers(text)


@pytest.mark.parametrize(
    ("text", "absent", "present"),
    [
        ("The order comes to 12,500 CNY", ["12", "500"], ["12500"]),
        ("the fee is 12 500", ["12", "500"], ["12500"]),
        ("Pay 1,888.00 now", ["1", "888", "888.00"], ["1888"]),
        ("pick items 1,2,3", ["123", "12", "23"], ["1", "2", "3"]),  # a list
        ("12,5000 units", ["125000", "12500"], ["12", "5000"]),  # 4 digits: no group
        ("1,234,56", ["1234", "123456", "23456"], ["1", "234", "56"]),
        ("5,1,234", ["1234", "51234"], ["5", "1", "234"]),  # no group out of a list
        ("0,500 and 012,500", ["12500"], ["0", "500", "12"]),  # no 0 leads a group: lists
        ("version 1.2.3 on 2024.01.02", ["1.2", "2.3", "2024.01"], []),
        ("1.234,56 EUR", ["1234.56"], []),  # a decimal comma is not read
        ("[100, 200]", ["100200"], ["100", "200"]),  # JSON lists keep their items
        ("运费 80，500 元以上包邮", ["80500"], ["80", "500"]),  # the Chinese clause comma
        ("共 １２，５００ 元", ["12", "500"], ["12500"]),  # but between full-width digits
    ],
)
def test_separated_digits_are_one_number_or_a_list_never_both(
    text: str, absent: list[str], present: list[str]
) -> None:
    for value in absent:
        assert not shows(value, text), value
    for value in present:
        assert shows(value, text), value


def test_a_whole_value_reads_as_one_number_only_when_it_is_one() -> None:
    assert as_number("12,500") == Decimal(12500) and as_number("２３２８．０２") == Decimal(
        "2328.02"
    )
    assert as_number("1,2,3") is None and as_number("ORD-2024-001") is None
    assert as_number("2.5") == Decimal("2.5") and as_number(" 7 ") == Decimal(7)


def test_text_values_match_across_width_spacing_and_separators() -> None:
    task = "Compute (2,471.60  -  20) * 0.95 exactly."
    assert shows("(2471.60 - 20) * 0.95", task)
    assert not shows("(2471.60 - 21) * 0.95", task)
    assert shows("ORD-2024-001", "订单 ＯＲＤ－２０２４－００１ 的状态？")
    assert shows("robert.brown209@example.com", "email Robert.Brown209@example.com.")
    assert not shows("ORD-2024-002", "订单 ORD-2024-001。")
    assert plain("A  1,234.50\tB") == "a 1234.50 b"


# --- derivations -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Ship a 2300 g parcel to Beijing.", "2.3"),  # the tool wants kg
        ("Ship a 2,300 g parcel to Beijing.", "2.3"),
        ("寄一个 2300 克的包裹。", "2.3"),
        ("寄一个 2300克的包裹。", "2.300"),
        ("a 2.3 kg parcel", "2300"),  # grams from kilograms
        ("a parcel of 2.3 kilograms", "2300"),
        ("一个 2.3 公斤的包裹", "2300"),
        ("一个 2.3 千克的包裹", "2300"),
        ('{"total_weight_kg": "9.5"}', "9500"),  # the unit in a result's key
        ('{"weight_g": 350}', "0.35"),
        ("a 5% discount", "0.05"),
        ("a ５％ discount", "0.05"),
        ("a 12.5 percent fee", "0.125"),
        ("百分之5的折扣", "0.05"),
        ("two parcels in one box: 1.2 kg and 1,100 g", "2.3"),  # a sum, in kg
        ("two parcels in one box: 1.2 kg and 1,100 g", "2300"),
        ("parcels of 1.2 kg and 1.1 kg", "0.1"),  # a difference
        ("subtotal 1,200.00 CNY plus shipping 80.00 CNY", "1280.00"),
        ("subtotal 1,200.00 CNY less a 80.00 CNY coupon", "1120"),
        ("小计 ¥1,200.00，运费 80 元", "1280"),  # ¥ is the shop's CNY
        ("$12.50 and 7.50 USD", "20"),
    ],
)
def test_one_step_derivations_count_as_known(text: str, value: str) -> None:
    assert shows(value, text)
    assert Decimal(value) in derived_numbers(text)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("a rate of 0.05", "5"),  # a bare fraction is not a percentage
        ("Ship 2300 parcels", "2.3"),  # no unit, no conversion
        ("5 gold members", "0.005"),  # 'g' must end there to be grams
        ("subtotal 1200.00 and shipping 80.00", "1280.00"),  # bare numbers are no operands
        ("100 USD and 100 CNY", "200"),  # different currencies
        ("USD 7.20, EUR 7.80 per unit; pay 100.00 USD", "107.20"),  # a code before is no money
        ("5% member and 10% coupon", "15"),  # percentages are not added
        ("5% member and 10% coupon", "0.15"),
        ("1 kg, 2 kg and 4 kg", "7"),  # a sum of three is two steps
        ("5% of 2,000.00 CNY", "100"),  # a percentage of an amount is not derived
        ("a 2.5 kg parcel; yes, 2.5 kg", "5"),  # one quantity is not added to itself
        ("1000 g or 1 kg", "0"),
        ("2,300 g", "2"),  # the parts of a grouped number are not quantities either
    ],
)
def test_what_takes_more_than_one_step_or_no_unit_is_not_known(text: str, value: str) -> None:
    assert not shows(value, text)


def test_the_planned_call_and_the_answer_use_the_same_rule() -> None:
    pay = ToolAction(tool="pay_order", arguments={"order_id": "ORD-2024-001", "amount": "2328.02"})
    assert missing_arguments(pay, view("Pay ORD-2024-001; the amount due is 2,328.02.")) == []
    assert missing_arguments(pay, view("Pay ORD-2024-001; the amount due is 2,328.")) == ["amount"]
    assert missing_arguments(pay, view("Pay ORD-2024-001; 2 328 02 due.")) == ["amount"]
    ship = ToolAction(tool="compute_shipping", arguments={"weight_kg": "2.3", "province": "北京市"})
    assert missing_arguments(ship, view("寄一个 2,300 克的包裹到北京市。")) == []
    assert missing_arguments(ship, view("寄一个 2,300 毫克的包裹到北京市。")) == ["weight_kg"]
    fee = NumberOutput(number="12500")
    assert output_fact(fee, view("The fee is 12,500."), needs_context=True) == "12500"
    assert output_fact(fee, view("The fee is 12,5000."), needs_context=True) is None
    assert output_fact(NumberOutput(number="2.3"), view("2300 g"), needs_context=True) == "2.3"
    assert known_numbers("12,500") == frozenset({Decimal(12500)})


# --- end to end ------------------------------------------------------------------------------


def _pay_scenario() -> Scenario:
    """Pay the seed order with the amount the task gives, written 2,328.02 before a full stop."""
    return Scenario.model_validate(
        {
            "id": "reader-pay-separated-amount",
            "category": "api",
            "language": "en",
            "task": "Pay order ORD-2024-001 now; the amount due is 2,328.02.",
            "gold_actions": [
                {
                    "tool": "pay_order",
                    "arguments": {"order_id": "ORD-2024-001", "amount": "2328.02"},
                }
            ],
            "gold_answer": "Order ORD-2024-001 is paid: 2328.02 CNY.",
            "required_outputs": [{"text": "ORD-2024-001"}, {"number": "2328.02"}],
        }
    )


def _shipping_scenario(worlds: WorldFactory) -> Scenario:
    """A weight in grams with a separator, for a tool that wants kg, before a full stop."""
    arguments = {"weight_kg": "2.3", "province": "浙江省"}
    with worlds.fresh() as world:
        fee = world.registry().invoke("compute_shipping", arguments)["data"]["shipping_fee"]
    return Scenario(
        id="reader-shipping-grams",
        category="calc",
        language="en",
        task="Tell me the shipping fee from the Shanghai warehouse to 浙江省 for a parcel that "
        "weighs 2,300 g.",
        gold_actions=[ToolAction(tool="compute_shipping", arguments=arguments)],
        gold_answer=f"Shipping costs {fee} CNY.",
        required_outputs=[NumberOutput(number=fee)],
        forbidden_actions=[],
    )


@pytest.mark.parametrize("agent", ["tether", "agent_executor"])
@pytest.mark.parametrize("which", ["pay", "shipping"])
def test_a_task_with_a_separated_amount_and_a_full_stop_is_passed_on_the_simulator(
    agent: str, which: str, worlds: WorldFactory
) -> None:
    scenario = _pay_scenario() if which == "pay" else _shipping_scenario(worlds)
    simulator = Simulator([scenario], persona=PERFECT, latency=LatencyModel.instant())
    with SimulatorServer(simulator) as server:
        name = model_name(scenario.id, 0, agent)
        settings = ChatSettings(base_url=server.base_url, model=name)
        with worlds.fresh() as world:
            prepare(world, scenario)
            record = make_agent(agent, Harness(retry_initial_delay=0.0)).run(
                scenario, world, settings
            )
            verdict = Judge(ExpectedStates(worlds)).judge(scenario, record, world)
    moves = [d.move for d in simulator.decisions(name)]
    assert verdict.passed, (verdict.failures, record.answer, moves)
    assert moves == ["plan", "answer"]  # it read the fact: no asking, no inventing
    assert [c.tool for c in record.tool_calls] == [a.tool for a in scenario.gold_actions]
