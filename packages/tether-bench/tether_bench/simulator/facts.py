"""Which facts a prompt holds, and what the simulated model writes when one is missing.

A *grounded* value (one with a digit: an order id, an amount, a weight, an email) can only be
used if the prompt shows it. Other values (a member tier, a currency code, a province, a
status filter) are what a model reads out of the task's wording, so they count as known.
Numbers match by value (``2328.02`` is ``2328.020``); text matches case-insensitively.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any

from tether_bench.scenarios import NumberOutput, RequiredOutput, TextOutput, ToolAction
from tether_bench.simulator.reading import PromptView

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
    """The prompt shows this value."""
    text = str(value)
    if _PLAIN_NUMBER.match(text):
        try:
            return Decimal(text) in view.numbers
        except InvalidOperation:  # pragma: no cover - the pattern only matches numbers
            return False
    return text.casefold() in view.text.casefold()


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
        if not needs_context or Decimal(output.number) in view.numbers:
            return output.number
        return None
    assert isinstance(output, TextOutput)
    wordings = [output.text, *output.any_of]
    if not needs_context:
        return output.text
    folded = view.text.casefold()
    for wording in wordings:
        if wording.casefold() in folded:
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
