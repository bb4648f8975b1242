"""How a prompt writes numbers and quantities, read back as values (for :mod:`.facts`).

Text is read after NFKC, so full-width digits and signs (``２３２８．０２``, ``１２，５００``,
``５％``, ``￥``) and no-break, thin and ideographic spaces read as their ASCII forms. The
full-width comma is the exception: it is a thousands separator only between full-width
digits (``１２，５００``); anywhere else it is the Chinese clause comma, so ``运费 80，500 元以上``
holds 80 and 500, not 80500.

**Numbers.** Digits with an optional decimal part (``.`` and digits) and an optional leading
``-``. A number does not touch another digit or another ``.digit``, so ``1.2.3`` (a version,
a date) holds none.

* *Trailing punctuation*: a full stop not followed by a digit ends the number, so
  ``the total is 2328.02.`` reads 2328.02 and ``2328.`` reads 2328; a comma, a colon, a
  bracket or ``。`` ends it the same way.
* *Thousands separators*: a lead group of 1-3 digits not starting with 0, then groups of
  exactly three digits, each after the same separator (a comma, or one space), is one number,
  and its groups are no numbers of their own: ``12,500`` and ``12 500`` are 12500 (not 12 and
  500), ``1,888.00`` is 1888.00. Every other run of digits joined by commas or spaces is a
  list, each run its own number: ``1,2,3`` is 1, 2 and 3; ``12,5000`` is 12 and 5000;
  ``1,234,56`` is 1, 234 and 56; and a group is never taken out of a longer list, so
  ``5,1,234`` holds no 1234. A decimal comma (``1.234,56``) is not read as one: the world
  writes decimals with ``.``.

**Quantities.** A number with a unit written right after it (a space allowed), with a
currency sign or ``百分之`` right before it, or as the value of a JSON key that names its unit
(the world's results write weights so: ``"total_weight_kg": "9.5"``):

* mass, in grams: ``g``, ``gram(s)``, ``克``; ``kg``, ``kilogram(s)``, ``kilo(s)``, ``公斤``,
  ``千克``; keys ending in ``_g`` or ``_kg``;
* percent: ``%``, ``percent``, ``per cent``, ``pct``; ``百分之`` before the number;
* money, by currency: the codes the world's rates know (CNY, RMB, USD, EUR, GBP, HKD, JPY,
  SGD), ``元``/``人民币``/``块`` (CNY), ``美元``, ``欧元``, ``英镑``, ``港元``/``港币``, ``日元``,
  ``新加坡元`` after the amount; ``¥`` (the shop's CNY), ``$``/``US$``, ``€``, ``£``, ``HK$``,
  ``S$`` before it. A code before the amount (``USD 7.20``) is not money: the world's rate
  table is written that way.

Letters of a unit must end there (``5 gold`` is no mass). Nothing here decides what counts
as known; :mod:`.facts` does.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Literal

Kind = Literal["mass", "percent", "money"]

_LEAD = r"[1-9][0-9]{0,2}"
_NUMBER = re.compile(
    r"(?<![0-9.])(?P<sign>-?)(?P<whole>"
    rf"(?<![0-9],){_LEAD}(?:,[0-9]{{3}})+(?![0-9]|,[0-9])"  # 12,500
    rf"|(?<![0-9] ){_LEAD}(?: [0-9]{{3}})+(?![0-9]| [0-9])"  # 12 500
    r"|[0-9]+"
    r")(?P<fraction>\.[0-9]+)?(?![0-9])(?!\.[0-9])"
)
_GROUP_SEPARATOR = re.compile(r"[, ]")
_CLAUSE_COMMA = re.compile(r"(?<![０-９])，|，(?![０-９])")
_SPACES = re.compile(r"\s+")

_GRAMS = {"g": Decimal(1), "kg": Decimal(1000)}
_SUFFIX_UNITS: tuple[tuple[str, Kind, str], ...] = (
    # (pattern, kind, unit); longer spellings first, so 千克 is not read as 克
    (r"kilograms?|kilos?|kgs?|公斤|千克", "mass", "kg"),
    (r"grams?|g|克", "mass", "g"),
    (r"%|percent|per cent|pct", "percent", "%"),
    (r"新加坡元|sgd", "money", "SGD"),
    (r"美元|usd", "money", "USD"),
    (r"欧元|eur", "money", "EUR"),
    (r"英镑|gbp", "money", "GBP"),
    (r"港元|港币|hkd", "money", "HKD"),
    (r"日元|jpy", "money", "JPY"),
    (r"元|人民币|块|cny|rmb|yuan", "money", "CNY"),
)
_SUFFIX = re.compile(
    r"\s?(?:" + "|".join(f"(?P<u{i}>{p})" for i, (p, _, _) in enumerate(_SUFFIX_UNITS)) + r")"
    r"(?![a-z])",
    re.IGNORECASE,
)
_PREFIX = re.compile(r"(?:(?P<money>hk\$|s\$|us\$|[$¥€£])|(?P<percent>百分之))\s?\Z", re.IGNORECASE)
_PREFIX_CURRENCY = {"hk$": "HKD", "s$": "SGD", "us$": "USD", "$": "USD", "¥": "CNY"}
_PREFIX_CURRENCY |= {"€": "EUR", "£": "GBP"}
_KEY_UNIT = re.compile(r"[\"'](?:\w+_)?(?P<unit>kg|g)[\"']\s*:\s*[\"']?\Z")
_LOOK_BEHIND = 40
"""Characters before a number searched for its currency sign or its JSON key."""


@dataclass(frozen=True, order=True)
class Quantity:
    """A number with a unit: mass in grams, a percentage, or money in one currency."""

    kind: Kind
    unit: str
    """``g`` for every mass (see :attr:`value`), ``%``, or the money's currency code."""
    value: Decimal
    """Grams for a mass (``2.3 kg`` is 2300), the number written for the others."""


def normalised(text: str) -> str:
    """The text after NFKC: full-width digits, stops and signs as ASCII, and a full-width
    comma as a comma only between full-width digits (elsewhere as ``、``, no separator)."""
    return unicodedata.normalize("NFKC", _CLAUSE_COMMA.sub("、", text))


def numbers(text: str) -> frozenset[Decimal]:
    """Every number the text writes, by value (see the module docstring for the rules)."""
    return _read(text)[0]


def quantities(text: str) -> frozenset[Quantity]:
    """Every quantity the text writes (a number with its unit), each once."""
    return _read(text)[1]


def as_number(value: str) -> Decimal | None:
    """The value of ``value`` if the whole of it is one number, in any written form."""
    text = normalised(value).strip()
    match = _NUMBER.fullmatch(text)
    return _value(match) if match else None


@lru_cache(maxsize=256)
def plain(text: str) -> str:
    """The text for substring matching: NFKC, case-folded, thousands separators dropped from
    grouped numbers, every run of whitespace one space."""
    text = _NUMBER.sub(_without_separators, normalised(text))
    return _SPACES.sub(" ", text.casefold())


@lru_cache(maxsize=256)
def _read(text: str) -> tuple[frozenset[Decimal], frozenset[Quantity]]:
    """Numbers and quantities of one text (a prompt is read several times per request)."""
    text = normalised(text)
    found: set[Decimal] = set()
    measured: set[Quantity] = set()
    for match in _NUMBER.finditer(text):
        value = _value(match)
        if value is None:  # pragma: no cover - the pattern only matches numbers
            continue
        found.add(value)
        quantity = _quantity(text, match, value)
        if quantity is not None:
            measured.add(quantity)
    return frozenset(found), frozenset(measured)


def _value(match: re.Match[str]) -> Decimal | None:
    whole = _GROUP_SEPARATOR.sub("", match["whole"])
    try:
        return Decimal(f"{match['sign']}{whole}{match['fraction'] or ''}")
    except InvalidOperation:  # pragma: no cover - the pattern only matches numbers
        return None


def _without_separators(match: re.Match[str]) -> str:
    whole = _GROUP_SEPARATOR.sub("", match["whole"])
    return f"{match['sign']}{whole}{match['fraction'] or ''}"


def _quantity(text: str, match: re.Match[str], value: Decimal) -> Quantity | None:
    """The quantity this number is, from the unit after it or the sign or key before it."""
    after = _SUFFIX.match(text, match.end())
    if after is not None and after.lastgroup is not None:
        _, kind, unit = _SUFFIX_UNITS[int(after.lastgroup[1:])]
        return _measured(kind, unit, value)
    before = text[max(0, match.start() - _LOOK_BEHIND) : match.start()]
    sign = _PREFIX.search(before)
    if sign is not None and sign["money"]:
        return Quantity("money", _PREFIX_CURRENCY[sign["money"].casefold()], value)
    if sign is not None:
        return Quantity("percent", "%", value)
    key = _KEY_UNIT.search(before)
    if key is not None:
        return _measured("mass", key["unit"].casefold(), value)
    return None


def _measured(kind: Kind, unit: str, value: Decimal) -> Quantity:
    if kind == "mass":
        return Quantity("mass", "g", value * _GRAMS[unit])
    return Quantity(kind, unit, value)
