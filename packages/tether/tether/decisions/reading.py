"""Reading values out of text: ids, numbers, and text normalised for comparing.

A leaf of :mod:`tether.decisions.grounding` (which exports these names): text is compared
after NFKC (full-width digits and letters become ASCII), one apostrophe for all the ways it is
written, case folding and whitespace collapsing; numbers are read by value.
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal, InvalidOperation

_SPACES = re.compile(r"\s+")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_NUMBER = re.compile(r"(?<![\d.])-?\d+(?:\.\d+)?")
_ID = re.compile(r"(?<![A-Za-z0-9])[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*(?![A-Za-z0-9])")
# Each pattern below starts only where its run of characters starts (a lookbehind, or one
# line at a time), so a long run that does not match costs linear time, not quadratic.
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_LIST_MARKER = re.compile(r"^[^\S\n]*\d{1,2}[.)]\s", re.MULTILINE)


_APOSTROPHES = str.maketrans(dict.fromkeys("\u2019\u2018\u02bc\u2032\uff07`", "'"))
"""Every way a keyboard or a model writes the apostrophe of "don't", read as one."""


def normalise(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed to single spaces."""
    plain = unicodedata.normalize("NFKC", text).translate(_APOSTROPHES)
    return _SPACES.sub(" ", plain.casefold()).strip()


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


def ids_in(text: str) -> set[str]:
    """Id-like tokens: capitals and digits, 4+ characters, with both (ORD-2024-001, U0003)."""
    found = set()
    for token in _ID.findall(unicodedata.normalize("NFKC", text)):
        if len(token) >= 4 and any(c.isdigit() for c in token):
            found.add(token)
    return found


def without_ids(text: str) -> str:
    """The text with emails, ids and list markers blanked: the numbers left are stated."""
    text = _EMAIL.sub(" ", unicodedata.normalize("NFKC", text))
    text = _ID.sub(lambda m: " " if any(c.isdigit() for c in m.group()) else m.group(), text)
    return _LIST_MARKER.sub(" ", text)
