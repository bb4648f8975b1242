"""Money as Decimal: parsed exactly, rounded half-up to cents, stored as integer cents.

Floats never touch an amount: a float input is read through its shortest ``repr`` (so ``0.1``
is ``Decimal("0.1")``), every computed amount is rounded ``ROUND_HALF_UP`` to 2 places, and the
database keeps integer cents so every SQL backend stores the same exact value.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation, localcontext
from typing import Annotated

from pydantic import Field

CENT = Decimal("0.01")
CURRENCY = "CNY"
"""The shop's currency: every order, price and payment is in Chinese yuan."""

MAX_AMOUNT = Decimal("99999999.99")

Amount = Annotated[
    Decimal,
    Field(
        ge=0,
        le=MAX_AMOUNT,
        decimal_places=2,
        description="Amount in CNY, at most 2 decimal places / 人民币金额，最多两位小数",
    ),
]
"""A non-negative money amount as tools accept it."""

PositiveAmount = Annotated[
    Decimal,
    Field(
        gt=0,
        le=MAX_AMOUNT,
        decimal_places=2,
        description="Amount in CNY, greater than 0, at most 2 decimal places / "
        "人民币金额，必须大于 0，最多两位小数",
    ),
]
"""A strictly positive money amount (what can be charged)."""


def to_decimal(value: Decimal | int | float | str) -> Decimal:
    """Exact Decimal for ``value``; floats go through ``repr`` so 0.1 stays 0.1."""
    if isinstance(value, bool):
        raise TypeError("a boolean is not an amount")
    if isinstance(value, float):
        value = repr(value)
    try:
        result = Decimal(value)
    except InvalidOperation as exc:
        raise ValueError(f"{value!r} is not a number") from exc
    if not result.is_finite():
        raise ValueError(f"{value!r} is not a finite number")
    return result


def round_half_up(value: Decimal | int | float | str, places: int) -> Decimal:
    """``value`` rounded half-up (away from zero on a tie) to ``places`` decimals."""
    with localcontext(prec=80):
        return to_decimal(value).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)


def round_money(value: Decimal | int | float | str) -> Decimal:
    """``value`` rounded half-up to cents: 0.005 -> 0.01, 2.675 -> 2.68, -0.005 -> -0.01."""
    return round_half_up(value, 2)


def to_cents(value: Decimal | int | float | str) -> int:
    """Integer cents of an amount (rounded half-up first)."""
    return int(round_money(value) * 100)


def from_cents(cents: int) -> Decimal:
    """The Decimal amount for integer ``cents`` (always 2 places)."""
    return (Decimal(cents) / 100).quantize(CENT)


def fmt(amount: Decimal) -> str:
    """An amount as a JSON-safe string with exactly 2 places (tools never return floats)."""
    return f"{round_money(amount):.2f}"


def fmt_cents(cents: int) -> str:
    """Integer cents as the same JSON-safe amount string."""
    return fmt(from_cents(cents))


def percent_of(amount: Decimal, percent: Decimal | int) -> Decimal:
    """``percent`` % of ``amount``, rounded half-up to cents."""
    return round_money(amount * Decimal(percent) / 100)
