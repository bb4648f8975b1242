"""Does a final answer state what it must? Normalised text and numbers with a tolerance.

Answers come in two languages and from models that format freely, so phrases are compared
after NFKC (full-width digits and letters become ASCII), case folding and whitespace
collapsing, and numbers are read out of the text (thousands separators and a currency sign
allowed) and compared by value, not by spelling: "2,328.0200" states 2328.02.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tether.bench.scenarios import NumberOutput, RequiredOutput, TextOutput

_SPACES = re.compile(r"\s+")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_NUMBER = re.compile(r"(?<![\d.])-?\d+(?:\.\d+)?")


def normalise(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed to single spaces."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def numbers_in(text: str) -> list[Decimal]:
    """Every number written in ``text`` (1,234.50 and ¥1234.5 both read as 1234.5)."""
    plain = _THOUSANDS.sub("", unicodedata.normalize("NFKC", text))
    values = []
    for match in _NUMBER.findall(plain):
        try:
            values.append(Decimal(match))
        except InvalidOperation:  # pragma: no cover - the pattern only matches numbers
            continue
    return values


def has_text(answer: str, output: TextOutput) -> bool:
    haystack = normalise(answer)
    return any(normalise(p) in haystack for p in (output.text, *output.any_of))


def has_number(answer: str, output: NumberOutput, numbers: Sequence[Decimal]) -> bool:
    target, tolerance = Decimal(output.number), Decimal(output.tolerance)
    return any(abs(value - target) <= tolerance for value in numbers)


def describe(output: RequiredOutput) -> str:
    """How a required output is shown in a judge's reasons."""
    from tether.bench.scenarios import TextOutput

    if isinstance(output, TextOutput):
        return repr(output.text)
    return f"{output.number}±{output.tolerance}"


def missing_outputs(answer: str | None, outputs: Iterable[RequiredOutput]) -> list[str]:
    """The required outputs ``answer`` does not state (all of them when there is no answer)."""
    from tether.bench.scenarios import TextOutput

    outputs = list(outputs)
    if not answer:
        return [describe(o) for o in outputs]
    numbers = numbers_in(answer)
    missing = []
    for output in outputs:
        ok = (
            has_text(answer, output)
            if isinstance(output, TextOutput)
            else has_number(answer, output, numbers)
        )
        if not ok:
            missing.append(describe(output))
    return missing


def same_value(a: object, b: object) -> bool:
    """Argument values compared as normalised text, so 2328.02 matches '2328.02'."""
    return normalise(str(a)) == normalise(str(b))
