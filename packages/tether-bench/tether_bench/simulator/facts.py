"""Which facts a prompt holds, and what the simulated model writes when one is missing.

A *grounded* value (one with a digit: an order id, an amount, a weight, an email) can only be
used if the prompt shows it. Other values (a member tier, a currency code, a province, a
status filter) are what a model reads out of the task's wording, so they count as known.
Numbers match by value (``2328.02`` is ``2328.020``); text matches case-insensitively.

**Shown.** A number counts as shown in any way the prompt writes it: with thousands
separators (``12,500``, ``1,888.00``, ``12 500``), in full-width digits (``１２，５００``), or
followed by a full stop (``the total is 2328.02.``); :mod:`.written` gives the exact rules,
including which comma-joined digits are one number and which a list (``1,2,3`` is three).
Text (an id, an email, an expression for ``calculate``) counts as shown when the prompt
contains it, compared after NFKC, case folding, one space for any run of whitespace and
thousands separators dropped, so ``(2,471.60 - 20) * 0.95`` shows ``(2471.60 - 20) * 0.95``.

**Derived.** A model that can compute also knows a number one step away from a *quantity*
the prompt shows (a number written with its unit, see :mod:`.written`), and nothing else
counts as derived:

1. *Conversions* of one quantity: a mass in grams and in kilograms (``2300 g`` gives 2.3 for
   a tool that wants kg, ``2.3 kg`` gives 2300), a percentage as a fraction (``5%`` gives
   0.05; a bare ``0.05`` does not give 5, since nothing says it is a rate).
2. *One sum or difference* of two different quantities of the same kind: two masses, or two
   amounts in the same currency. A mass result is known in g and in kg, whichever units
   the two were written in (``1.2 kg`` and ``1,100 g`` give 2.3 and 2300: a unit is how a
   quantity is written, not a step). ``1,200.00 CNY`` and ``80.00 CNY`` give 1280.00 and
   1120.00. A difference is the larger less the smaller, never 0; a quantity written twice
   is one quantity, so it is not added to itself.

Nothing else is derived: not a sum of three, not a percentage of an amount, not a sum of
percentages (member and coupon discounts do not stack); the world has ``compute_discount``
and ``calculate`` for those, and a plan that needs them calls them. Bare numbers (a JSON
field without a unit in its name, an id's digits) are never operands, and money is never
converted between currencies (that takes the shop's rates, which is ``convert_currency``'s
job). The same rule serves a planned call's arguments (:func:`missing_arguments`) and the
answer's required numbers (:func:`output_fact`).
"""

from __future__ import annotations

import re
from decimal import Decimal
from functools import lru_cache
from itertools import combinations
from typing import Any

from tether_bench.scenarios import NumberOutput, RequiredOutput, TextOutput, ToolAction
from tether_bench.simulator import written
from tether_bench.simulator.reading import PromptView, holds
from tether_bench.simulator.written import Kind

_DIGIT = re.compile(r"\d")
_PLAIN_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")
INVENT_FACTOR = Decimal("1.1")
"""An invented amount is the right one off by 10%: plausible, and wrong."""


def grounded(value: Any) -> bool:
    """The value must come from the context (it carries a digit), not from the wording."""
    return (
        isinstance(value, str | int | float)
        and not isinstance(value, bool)
        and (_DIGIT.search(str(value)) is not None)
    )


def visible(value: Any, view: PromptView) -> bool:
    """The prompt shows this value, or a number one step from what it shows (see above)."""
    text = str(value)
    number = written.as_number(text)
    if number is not None:
        return number in known_numbers(view.text)
    return holds(view.text, text) or written.plain(text) in written.plain(view.text)


@lru_cache(maxsize=256)
def known_numbers(text: str) -> frozenset[Decimal]:
    """Every number the text shows, and every number derived from its quantities."""
    return written.numbers(text) | derived_numbers(text)


@lru_cache(maxsize=256)
def derived_numbers(text: str) -> frozenset[Decimal]:
    """The numbers one conversion or one sum or difference away from the text's quantities
    (the rule is in the module docstring)."""
    shown = sorted(written.quantities(text))
    found: set[Decimal] = set()
    for quantity in shown:
        found |= _spellings(quantity.kind, quantity.value)
    for a, b in combinations(shown, 2):
        if a.kind == "percent" or (a.kind, a.unit) != (b.kind, b.unit):
            continue
        for result in (a.value + b.value, abs(a.value - b.value)):
            if result:
                found |= _spellings(a.kind, result)
    return frozenset(found)


def _spellings(kind: Kind, value: Decimal) -> set[Decimal]:
    """The numbers a quantity is written as: a mass in g and kg, a percentage as a fraction."""
    if kind == "mass":
        return {value, value / 1000}
    if kind == "percent":
        return {value, value / 100}
    return {value}


def missing_arguments(step: ToolAction, view: PromptView) -> list[str]:
    """The step's argument names whose grounded values the prompt does not show."""
    return [k for k, v in step.arguments.items() if grounded(v) and not visible(v, view)]


def invent(value: Any) -> Any:
    """A plausible wrong value of the same shape: an amount 10% off, an id one digit off."""
    text = str(value)
    if _PLAIN_NUMBER.match(text):
        number = Decimal(text)
        made_up = (number * INVENT_FACTOR).quantize(number) if "." in text else number + 1
        return str(made_up) if isinstance(value, str) else type(value)(made_up)
    digits = [i for i, c in enumerate(text) if c.isdigit()]
    if not digits:
        return value
    at = digits[-1]
    return text[:at] + str((int(text[at]) + 1) % 10) + text[at + 1 :]


def output_fact(output: RequiredOutput, view: PromptView, *, needs_context: bool) -> str | None:
    """How the answer states one required output, or None when the context lacks it.

    ``needs_context`` is False for a task no tool serves (general knowledge, or a refusal's
    wording): the model states it from what it knows. Otherwise a number must be shown, and
    a phrase must be shown itself, in one of its wordings, or by its last word (the status
    word of "already paid").
    """
    if isinstance(output, NumberOutput):
        if not needs_context or Decimal(output.number) in known_numbers(view.text):
            return output.number
        return None
    assert isinstance(output, TextOutput)
    wordings = [output.text, *output.any_of]
    if not needs_context:
        return output.text
    folded = view.text.casefold()
    for wording in wordings:
        if holds(view.text, wording):
            return wording
    last = output.text.split()[-1] if output.text.split() else ""
    if len(last) >= 3 and re.search(rf"(?<!\w){re.escape(last.casefold())}(?!\w)", folded):
        return output.text
    return None


def invented_fact(output: RequiredOutput) -> str:
    """What a model that guesses states instead of a required output it cannot see."""
    if isinstance(output, NumberOutput):
        return str(invent(output.number))
    return "done"
