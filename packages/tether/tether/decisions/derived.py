"""Numbers a run backs though no result states them: worked out from what the tools returned.

A leaf of :mod:`tether.decisions.grounding`: an answer's total, remaining balance, price times
quantity or average is the model's arithmetic on the results, not a value it made up.
"""

from __future__ import annotations

import bisect
from decimal import Decimal

TOLERANCE = Decimal("0.01")
"""Two numbers this close are the same (a cent)."""


def backed(
    value: Decimal, known: list[Decimal], found: list[Decimal], percents: set[Decimal]
) -> bool:
    """``value`` (not negative) is a known number (sorted), one worked out from the ``found``
    ones (the results'), or a percentage whose rate (or one minus it) is known."""
    if near(known, value) or derived(found, known, value) or value in percents:
        return True
    return any(rate in known for rate in (value / 100, 1 - value / 100) if rate <= 1)


def near(known: list[Decimal], value: Decimal) -> bool:
    """Some number of ``known`` (sorted) is within :data:`TOLERANCE` of ``value``."""
    nearest = bisect.bisect_left(known, value - TOLERANCE)
    return nearest < len(known) and known[nearest] <= value + TOLERANCE


def derived(found: list[Decimal], known: list[Decimal], value: Decimal) -> bool:
    """``value`` is worked out from what the tools returned: the sum, difference, product or
    quotient of a returned number and a known one (a total, a remaining balance, a price
    times a quantity), or the sum or mean of the returned numbers (within about a cent). A
    value worked out from the task's numbers alone is not: the tools were there for it."""
    if not found:
        return False
    total = sum(found, Decimal(0))
    if near([total / len(found), total], value):
        return True
    for a in found:  # the other operand each operation would need, looked up among the known
        wanted = [value - a, a - value, value + a, value * a]
        wanted += [value / a] if a else []
        wanted += [a / value] if value else []
        if any(near(known, other) for other in wanted):
            return True
    return False
