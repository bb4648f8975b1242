"""Read one JSON object out of a model's text: repair drift outside strings, never guess.

One linear scan (:func:`scan_object`) finds the object's extent and, outside strings only,
turns curly quotes and full-width punctuation into their ASCII forms, so values keep what
they say (``"客户说“尽快”发货"`` keeps its quotes, an address keeps its full-width comma).
The scan also refuses what must not be repaired:

- an object that never closes (a reply cut off mid-value): completing it would invent data,
  such as a truncated order id;
- text after the object's closing brace (``{"a": 1}, "b": 2}``): keys would be dropped.
  Asked to (``prose=True``), it allows prose after the object (``{"a": 1} (looking it up)``):
  text with no brace or bracket, no quoted key and colon, not starting with a comma, colon
  or quote;
- nesting deeper than :data:`MAX_DEPTH`: decoders recurse, and no tool takes such input.

What remains is decoded strictly, then with json-repair (trailing commas, single quotes,
missing commas) on the extent found, which is already closed, so nothing is completed.
"""

from __future__ import annotations

import json
import re
from typing import Any

import json_repair

MAX_DEPTH = 32
"""Deepest nesting accepted in model-written JSON."""

_OPEN = {"{": "}", "[": "]", "｛": "}", "［": "]"}
_CLOSE = {"}", "]", "｝", "］"}
_OUTSIDE = str.maketrans({"：": ":", "，": ",", "｛": "{", "｝": "}", "［": "[", "］": "]"})
_QUOTES = {'"': '"', "“": '”"', "'": "'", "‘": "’'"}
"""String openers and the quotes that close them; a straight quote also closes a curly one."""
_PREVIEW = 200
_JSON_NEXT = ",:，：\"'“‘"
_MORE_JSON = re.compile(r"[{}\[\]｛｝［］]|[\"”'’][ \t]*[:：]")
"""A brace or bracket (more JSON, or keys after an early brace), or a quoted key and colon."""


class JsonReadError(ValueError):
    """The text holds no usable JSON object; the message tells the model what to fix."""


def read_object(
    text: str, repairs: list[str] | None = None, *, prose: bool = False
) -> dict[str, Any]:
    """The JSON object in ``text`` (code fences and full-width drift allowed); ``prose``:
    prose after it is allowed too. The name of each repair made is added to ``repairs``:
    ``punctuation`` (quotes or full-width marks outside strings), ``json_then_prose``,
    ``json_repair`` (decoded by json-repair)."""
    made = [] if repairs is None else repairs
    body = _unfence(text.strip())
    starts = [i for i in (body.find("{"), body.find("｛")) if i >= 0]
    if not starts:
        raise JsonReadError("Action Input is not a JSON object")
    normalised, rest = scan_object(body[min(starts) :])
    if normalised != body[min(starts) :][: len(normalised)]:
        made.append("punctuation")
    if rest.strip() and not (prose and _is_prose(rest.strip())):
        raise JsonReadError(
            "Action Input has text after its JSON object "
            f"({_preview(rest.strip())}); write exactly one JSON object"
        )
    if rest.strip():
        made.append("json_then_prose")
    value = _decode(normalised, made)
    if not isinstance(value, dict):
        raise JsonReadError(f"Action Input could not be read as a JSON object: {_preview(text)}")
    return value


def scan_object(text: str) -> tuple[str, str]:
    """``text`` (starting at an opening brace) split into the normalised object and the rest.

    Raises JsonReadError when the object never closes or nests deeper than MAX_DEPTH.
    """
    out: list[str] = []
    depth, closers, escaped = 0, "", False
    for index, char in enumerate(text):
        if closers:  # inside a string: copied as written, up to its closing quote
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char in closers:
                closers, char = "", _straight(char)
            out.append(char)
            continue
        if char in _QUOTES:
            closers, char = _QUOTES[char], _straight(char)
        elif char in _OPEN:
            depth += 1
            if depth > MAX_DEPTH:
                raise JsonReadError(f"Action Input nests deeper than {MAX_DEPTH} levels")
        elif char in _CLOSE:
            depth -= 1
        out.append(char.translate(_OUTSIDE))
        if depth == 0:
            return "".join(out), text[index + 1 :]
    raise JsonReadError(
        "Action Input is incomplete: its JSON object never closes (was the reply cut off?); "
        "write the whole object"
    )


def _straight(char: str) -> str:
    return '"' if char in '"“”' else "'" if char in "'‘’" else char


def _is_prose(tail: str) -> bool:
    """Whether text after an object cannot be part of it or another one."""
    return tail[0] not in _JSON_NEXT and not _MORE_JSON.search(tail)


def _decode(text: str, repairs: list[str]) -> Any:
    try:
        return json.loads(text)
    except ValueError:  # JSONDecodeError, or an integer too long to convert
        pass
    repairs.append("json_repair")
    try:
        return json_repair.loads(text)
    except Exception as exc:  # the repair library's own failure is a parse failure too
        raise JsonReadError(f"Action Input could not be read as JSON: {_preview(text)}") from exc


def _unfence(text: str) -> str:
    """Drop a Markdown code fence around the text (string operations: linear, no regex)."""
    if text.startswith("```"):
        newline = text.find("\n")
        text = text[newline + 1 :] if newline >= 0 else text[3:]
    text = text.rstrip()
    if text.endswith("```"):
        text = text[:-3]
    return text.strip()


def _preview(text: str) -> str:
    return repr(text[:_PREVIEW] + ("..." if len(text) > _PREVIEW else ""))
