"""Untrusted text made safe for a terminal: control characters shown, never obeyed.

Model text, tool output, reasons and answers reach the same terminal that then asks for an
approval. Written raw, an escape sequence in them would act on it (an OSC 52 clipboard
write, erasing a line, clearing the screen), and a lone surrogate would stop the command.
Each such character is written as its escape instead (``\\x1b``); newlines and tabs stay.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 controls but tab and newline, DEL, C1 (\x9b is CSI)
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # bidi controls: text that reads reordered
    "\ud800-\udfff]"  # lone surrogates: not UTF-8, so not writable
)


def visible(text: str) -> str:
    """``text`` with each unsafe character written as its Python escape (``\\x1b``)."""
    return _UNSAFE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def visible_json(text: str) -> str:
    """JSON text with each unsafe character written as a JSON escape (``\\u001b``): the same
    JSON value, safe to write to a terminal."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
