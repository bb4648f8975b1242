"""Money is Decimal, rounded half-up to cents, and exact through floats and storage."""

from __future__ import annotations

from decimal import Decimal

import pytest
from tether_world.money import (
    fmt,
    fmt_cents,
    from_cents,
    percent_of,
    round_half_up,
    round_money,
    to_cents,
    to_decimal,
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("0.005", "0.01"),
        ("0.015", "0.02"),  # half-even would give 0.02 too; the next two tell them apart
        ("0.025", "0.03"),
        ("2.345", "2.35"),
        ("1.004", "1.00"),
        ("-0.005", "-0.01"),
        (2.675, "2.68"),  # the float 2.675 is 2.67499999...; read through repr it is 2.675
        (7, "7.00"),
    ],
)
def test_round_money_is_half_up(value: object, expected: str) -> None:
    assert round_money(value) == Decimal(expected)  # type: ignore[arg-type]
    assert str(round_money(value)) == expected  # type: ignore[arg-type]


def test_floats_are_read_through_repr() -> None:
    assert to_decimal(0.1) + to_decimal(0.2) == Decimal("0.3")


@pytest.mark.parametrize("bad", ["nan", "Infinity", "abc", True])
def test_to_decimal_refuses_non_numbers(bad: object) -> None:
    with pytest.raises((ValueError, TypeError)):
        to_decimal(bad)  # type: ignore[arg-type]


def test_cents_round_trip_exactly() -> None:
    assert to_cents("2328.02") == 232802
    assert from_cents(232802) == Decimal("2328.02")
    assert to_cents("0.015") == 2
    assert fmt_cents(5) == "0.05"
    assert fmt(Decimal("3")) == "3.00"


def test_percent_of_rounds_half_up() -> None:
    assert percent_of(Decimal("2471.60"), 5) == Decimal("123.58")
    assert percent_of(Decimal("0.10"), 5) == Decimal("0.01")  # 0.005 rounds up


def test_round_half_up_other_places_and_large_values() -> None:
    assert round_half_up(Decimal("1.23456"), 4) == Decimal("1.2346")
    assert round_half_up(Decimal("1e29") + Decimal("0.5"), 0) == Decimal("1e29") + 1
