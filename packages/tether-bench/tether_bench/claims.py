"""What a final answer claims (ids, numbers, statuses, refusal reasons) and what backs it.

The judge trusts no sentence of an answer: every id, number and status it states must come
from the task or from data a tool returned in that run (the recording registry keeps every
successful result). The vocabulary here (status words in two languages, the refusal phrases)
is the orders world's; the extraction itself is plain text processing.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from tether_bench.matching import normalise, numbers_in

_ID = re.compile(r"(?<![A-Za-z0-9])[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*(?![A-Za-z0-9])")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_LIST_MARKER = re.compile(r"^\s*\d{1,2}[.)]\s", re.MULTILINE)
_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s*%")

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

_STATUS = re.compile(
    r"\b(pending|paid|shipped|delivered|cancell?ed|refunded)\b|"
    + "|".join(sorted((w for w in STATUS_WORDS if not w.isascii()), key=len, reverse=True))
)
_NEGATION = re.compile(
    r"(\bnot\b|n't|\bnever\b|\bno longer\b|\byet\b|\bcannot\b|\bunable\b|未|没|不|无法)"
    r"[^.;,。；，]{0,14}$"
)
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


@dataclass(frozen=True)
class Claims:
    """What an answer states: ids, numbers (ids and list markers left out), order statuses."""

    ids: frozenset[str]
    numbers: tuple[Decimal, ...]
    statuses: frozenset[str]
    refuses: bool
    says_no_tool: bool
    asks_for_information: bool


def _nfkc(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def ids_in(text: str) -> set[str]:
    """Id-like tokens: capitals and digits, 4+ characters, with both (ORD-2024-001, U0003)."""
    found = set()
    for token in _ID.findall(_nfkc(text)):
        if len(token) >= 4 and any(c.isdigit() for c in token):
            found.add(token)
    return found


def _without_ids(text: str) -> str:
    text = _EMAIL.sub(" ", _nfkc(text))
    text = _ID.sub(lambda m: " " if any(c.isdigit() for c in m.group()) else m.group(), text)
    return _LIST_MARKER.sub(" ", text)


def statuses_in(text: str) -> set[str]:
    """Statuses the text claims, not those it negates ("not yet paid", "cannot be cancelled")."""
    plain = normalise(text)
    claimed = set()
    for match in _STATUS.finditer(plain):
        if _NEGATION.search(plain[max(0, match.start() - 20) : match.start()]):
            continue
        claimed.add(STATUS_WORDS.get(match.group(), STATUS_WORDS.get(match.group().strip(), "")))
    claimed.discard("")
    return claimed


def read_claims(answer: str) -> Claims:
    """Everything ``answer`` claims that the judge checks."""
    plain = normalise(answer)
    return Claims(
        ids=frozenset(ids_in(answer)),
        numbers=tuple(numbers_in(_without_ids(answer))),
        statuses=frozenset(statuses_in(answer)),
        refuses=bool(_REFUSAL.search(plain)),
        says_no_tool=bool(_NO_TOOL.search(plain)),
        asks_for_information=bool(_ASKS.search(plain)),
    )


def _leaves(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _leaves(item)
    elif value is not None:
        yield str(value)


def _statuses(value: Any) -> Iterator[str]:
    """Every value under a ``status`` key, anywhere in the data, as an order status."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "status" and isinstance(item, str):
                yield from RESULT_STATUS.get(item, (item,))
            else:
                yield from _statuses(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _statuses(item)


def _reached(value: Any, text: str, numbers: list[Decimal]) -> bool:
    """An argument value the task or an earlier connected result already stated."""
    ids = ids_in(str(value))
    if ids:
        return bool(ids & ids_in(text))
    if normalise(str(value)) in normalise(text):
        return True
    return any(abs(n - k) <= Decimal("0.01") for n in numbers_in(str(value)) for k in numbers)


@dataclass
class Evidence:
    """What a run saw about its task: the task, and the successful tool calls connected to it.

    A call is connected when it has no arguments or one of its argument values comes from the
    task or from an earlier connected call's data (an id must match an id). So facts fetched
    about some other order (a random lookup) ground nothing in this task's answer.
    """

    task: str
    calls: list[tuple[Any, Any]] = field(default_factory=list)

    def connected(self) -> list[tuple[Any, Any]]:
        text, numbers, kept = self.task, numbers_in(self.task), []
        for arguments, result in self.calls:
            values = list(_leaves(arguments))
            if not values or any(_reached(v, text, numbers) for v in values):
                kept.append((arguments, result))
                data = json.dumps(result, ensure_ascii=False, default=str)
                text, numbers = text + "\n" + data, numbers + numbers_in(data)
        return kept

    def text(self) -> str:
        data = [result for _, result in self.connected()]
        return self.task + "\n" + json.dumps(data, ensure_ascii=False, default=str)

    def ids(self) -> set[str]:
        return ids_in(self.text())

    def ids_in_task(self) -> set[str]:
        return ids_in(self.task)

    def numbers(self) -> list[Decimal]:
        return numbers_in(self.text())

    def statuses_about(self, ids: Iterable[str]) -> set[str]:
        """Statuses the tools reported in connected calls whose arguments or data name one of
        ``ids``."""
        wanted = set(ids)
        seen: set[str] = set()
        for arguments, result in self.connected():
            named = set(_leaves(arguments)) | set(_leaves(result))
            if named & wanted:
                seen.update(_statuses(result))
        return seen


def ungrounded_numbers(claims: Claims, evidence: Evidence) -> list[Decimal]:
    """The answer's numbers that no tool returned and the task does not state.

    A percentage counts as grounded when its rate (or one minus it) was returned.
    """
    known = [abs(n) for n in evidence.numbers()]
    rates = {n for n in known if n <= 1}
    percents = {Decimal(p) for p in _PERCENT.findall(evidence.text())}
    missing = []
    for number in claims.numbers:
        value = abs(number)
        if any(abs(value - k) <= Decimal("0.01") for k in known):
            continue
        if value in percents or value / 100 in rates or 1 - value / 100 in rates:
            continue
        missing.append(number)
    return missing


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
