"""Text and number matching for final answers: normalised text, numbers compared by value.

Answers come in two languages and from models that format freely, so phrases are compared
after tether's normalisation (NFKC: full-width digits and letters become ASCII; case folding;
whitespace collapsed), and numbers, read out of the text by tether's ``numbers_in``
(thousands separators and a currency sign allowed), are compared by value, not by spelling:
"2,328.0200" states 2328.02.

This module works on plain strings and numbers only (it imports nothing from the benchmark),
so the scenario model and the judge can both use it without importing each other.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from decimal import Decimal

from tether.decisions.grounding import normalise


def has_phrase(text: str, phrases: Iterable[str]) -> bool:
    """Some phrase occurs in ``text`` (both normalised); a phrase that starts or ends with a
    letter or digit must do so at a word boundary, so "hi" is not found in "shipped"."""
    haystack = normalise(text)
    for phrase in phrases:
        needle = normalise(phrase)
        if not needle:
            continue
        left = r"(?<![a-z0-9])" if needle[0].isascii() and needle[0].isalnum() else ""
        right = r"(?![a-z0-9])" if needle[-1].isascii() and needle[-1].isalnum() else ""
        if re.search(left + re.escape(needle) + right, haystack):
            return True
    return False


def has_number(numbers: Iterable[Decimal], target: Decimal, tolerance: Decimal) -> bool:
    """Some number is within ``tolerance`` of ``target``."""
    return any(abs(value - target) <= tolerance for value in numbers)


def same_value(a: object, b: object) -> bool:
    """Argument values compared as normalised text, so 2328.02 matches '2328.02'."""
    return normalise(str(a)) == normalise(str(b))
