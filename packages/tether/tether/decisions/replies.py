"""How a text reads: a reply that asks the user something or declines, a word negated.

The final-answer check asks these before it pushes a reply towards a lookup or a change: a
reply that asks the user something has not answered yet, one that says a change cannot be
made has done what the change note would ask of it, and a task that negates a change's word
("I don't want to cancel", any apostrophe) does not ask for it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tether.decisions.grounding import NEGATION, normalise

_ASKS = re.compile(
    r"[?？](?:\s|[\"'”’)*]|$)|¿|\b(?:please (?!note\b)[a-z]+|let me know|feel free to|"
    r"if you have any (?:other|more|further) questions|anything else|"
    r"por favor,? (?:proporcion|confirm|indiqu|indic)\w*)\b|请(?:提供|确认|告诉)"
)
"""A question, a request of the user (to give, confirm or do something), or an offer of more
help: the reply hands the turn back (English, Spanish, Chinese)."""
_OFFERS = re.compile(
    r"(?:^|(?<=[.?!。？！\n]))[^.?!。？！\n]*\b(?:anything else|feel free to|"
    r"if you have any (?:other|more|further) questions)\b[^.?!。？！\n]*[.?!。？！]?"
)
"""A sentence that offers more help. A match starts only where a sentence starts, so a long
sentence without the offer costs linear time, not quadratic."""
_DECLINES = re.compile(
    r"\b(cannot|can't|can ?not|unable|not able|won't|will not|could not|couldn't|"
    r"not (?:possible|allowed|permitted|eligible)|isn't (?:possible|allowed|eligible)|"
    r"nothing is eligible|not authori[sz]ed|(?:does not|doesn't) allow|"
    r"did not go through|didn't go through|"
    r"transferr(?:ed|ing)|human agent|no (?:puedo|podemos|es posible|se puede))\b"
    r"|无法|不能|不可以|不允许|转人工"
)
"""A refusal or a hand-off, in the languages the check reads (English, Chinese, Spanish)."""


def asks_user(answer: str) -> bool:
    """The reply asks the user something (a confirmation the domain asks for before a
    change, an id it needs): in a conversation that hands the turn back, it is not an answer
    given too soon."""
    return bool(_ASKS.search(_read(answer)))


def offers_help(answer: str) -> bool:
    """The reply hands the turn back only with an offer of more help ("Let me know if you
    need anything else."): it closes the turn, as an answer does, so it is read as one."""
    return asks_user(answer) and not asks_user(_OFFERS.sub(" ", _read(answer)))


def declines(answer: str) -> bool:
    """The answer says a change cannot or will not be made (a refusal the policy calls for),
    or hands the user to a person: what the change note would ask of it already."""
    return bool(_DECLINES.search(_read(answer)))


def _read(answer: str) -> str:
    """The reply as the patterns read it: normalised, with a JSON-escaped line break (a reply
    some harnesses wrap as ``{"message": "..."}``) read as one."""
    return normalise(answer.replace("\\n", "\n"))


def negated(plain: str, parts: Sequence[str]) -> bool:
    """Some occurrence of one of ``parts`` in the normalised text follows a negation."""
    for part in parts:
        edge = r"\b" if part.isascii() else ""  # Chinese has no spaces between words
        for match in re.finditer(rf"{edge}{re.escape(part)}{edge}", plain):
            if NEGATION.search(plain[max(0, match.start() - 20) : match.start()]):
                return True
    return False
