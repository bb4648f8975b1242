"""What a final answer claims in the orders world: its statuses and refusal reasons.

Reading ids, numbers and statuses out of an answer, and what backs them (the task and the
connected successful tool calls), is tether's own (:mod:`tether.decisions.grounding`): the
loop's check before a final answer and this judge share it. What is the orders world's is
here: the status words in two languages and what a payment's status establishes
(:data:`ORDERS`), the refusal phrases, and two amounts given for one thing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from tether.decisions.grounding import Stated, Vocabulary, normalise, stated_in

STATUS_WORDS: dict[str, str] = {
    "pending": "pending",
    "paid": "paid",
    "shipped": "shipped",
    "delivered": "delivered",
    "cancelled": "cancelled",
    "canceled": "cancelled",
    "refunded": "refunded",
    "待支付": "pending",
    "已支付": "paid",
    "已付款": "paid",
    "已经支付": "paid",
    "已发货": "shipped",
    "已经发货": "shipped",
    "已送达": "delivered",
    "已取消": "cancelled",
    "已经取消": "cancelled",
    "取消成功": "cancelled",
    "已退款": "refunded",
    "已经退款": "refunded",
    "退款成功": "refunded",
}
"""Status words an answer may use, mapped to the world's status they claim."""

RESULT_STATUS: dict[str, tuple[str, ...]] = {
    "succeeded": ("paid",),
    "refunded": ("refunded", "cancelled"),
}
"""Payment statuses in tool data and the order statuses they establish in this world: a
succeeded charge makes the order paid; a refund cancels a paid order (the refund tool's
contract)."""

ORDER_STATUSES = frozenset({"pending", "paid", "shipped", "delivered", "cancelled"})
"""Mutually exclusive order states (refunded is a payment's, and can follow any of them)."""

_REFUSAL = re.compile(
    r"\b(cannot|can ?not|can't|unable|not able to|i'm sorry|i am sorry)\b|无法|不能|没法|抱歉"
)
_NO_TOOL = re.compile(
    r"\bno (suitable |available |such )?tools?\b|\bnot supported\b|\b(does not|doesn't|don't|do "
    r"not) (have|support)\b.{0,30}\b(tool|function|capabilit)|\bno tool\b|工具不支持|不支持|"
    r"没有.{0,15}工具"
)
_ASKS = re.compile(
    r"\bwhich order\b|\border (id|number)\b|\b(please )?(provide|tell me|give me|share)\b|"
    r"哪个订单|哪一个订单|哪笔|订单号|订单编号|请提供|请告诉"
)


ORDERS = Vocabulary(words=STATUS_WORDS, results=RESULT_STATUS)
"""The orders world's statuses, as the grounding check reads them."""


@dataclass(frozen=True)
class Claims(Stated):
    """What an answer states (ids, numbers, order statuses) and how it refuses, if it does."""

    refuses: bool
    says_no_tool: bool
    asks_for_information: bool


def read_claims(answer: str) -> Claims:
    """Everything ``answer`` claims that the judge checks."""
    plain = normalise(answer)
    stated = stated_in(answer, ORDERS)
    return Claims(
        ids=stated.ids,
        numbers=stated.numbers,
        statuses=stated.statuses,
        refuses=bool(_REFUSAL.search(plain)),
        says_no_tool=bool(_NO_TOOL.search(plain)),
        asks_for_information=bool(_ASKS.search(plain)),
    )


_LABELLED_AMOUNT = re.compile(
    r"\b(amount|payable|charged|total|fee|price|refund(?:ed)?|paid)\b[^0-9\n]{0,16}?"
    r"(\d[\d,]*(?:\.\d+)?)|(实付|应付|运费|价格|金额|退款|总计)[^0-9\n]{0,8}?(\d[\d,]*(?:\.\d+)?)"
)


def conflicting_amounts(answer: str) -> list[str]:
    """Labels the answer gives two different amounts for ("payable 10.00 ... payable 12.00")."""
    seen: dict[str, set[Decimal]] = {}
    for match in _LABELLED_AMOUNT.finditer(normalise(answer)):
        label = match.group(1) or match.group(3)
        number = match.group(2) or match.group(4)
        seen.setdefault(label, set()).add(Decimal(number.replace(",", "")))
    return sorted(label for label, values in seen.items() if len(values) > 1)
