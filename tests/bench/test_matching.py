"""Required outputs: normalised phrases and numbers with a tolerance."""

from __future__ import annotations

from decimal import Decimal

from tether.decisions.grounding import numbers_in
from tether_bench.matching import same_value
from tether_bench.scenarios import NumberOutput, TextOutput, missing_outputs


def test_numbers_are_read_with_separators_full_width_and_signs() -> None:
    assert numbers_in("应付 ２３２８.０２ 元, total 1,234.50 and ¥7") == [
        Decimal("2328.02"),
        Decimal("1234.50"),
        Decimal("7"),
    ]


def test_numbers_match_by_value_within_tolerance() -> None:
    out = [NumberOutput(number="2328.02")]
    assert missing_outputs("Paid 2,328.020 CNY", out) == []
    assert missing_outputs("Paid 2328.03", out) == []
    assert missing_outputs("Paid 2328.04", out) == ["2328.02±0.01"]
    assert missing_outputs("Paid 232802", out) == ["2328.02±0.01"]
    exact = [NumberOutput(number="7", tolerance="0")]
    assert missing_outputs("7 days", exact) == [] and missing_outputs("7.5 days", exact)


def test_phrases_ignore_case_width_and_spacing_and_accept_alternatives() -> None:
    out = [TextOutput(text="ORD-2024-001"), TextOutput(text="cancelled", any_of=["已取消"])]
    assert missing_outputs("Order  ord-2024-001 has been CANCELLED.", out) == []
    assert missing_outputs("订单 ＯＲＤ-2024-001 已取消", out) == []
    assert missing_outputs("订单 ORD-2024-001 已支付", out) == ["'cancelled'"]


def test_no_answer_misses_everything() -> None:
    out = [TextOutput(text="a"), NumberOutput(number="1")]
    assert missing_outputs(None, out) == ["'a'", "1±0.01"]
    assert missing_outputs("", []) == []


def test_argument_values_compare_as_text() -> None:
    assert same_value(2328.02, "2328.02") and same_value("ord-2024-001", "ORD-2024-001")
    assert not same_value("ORD-2024-001", "ORD-2024-002")
