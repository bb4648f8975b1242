"""Shape tool argument schemas for the grammar engines that enforce them.

Three things a server's structured-output backend needs that pydantic's schemas do not give:

* ``$ref``s resolve against the root of the *whole* response schema, so each tool's ``$defs``
  are hoisted to that root (renamed when two tools define the same name differently); left
  under ``arguments`` they make vLLM answer 400 for any tool with a nested model or an Enum.
* ``\\d`` in a pattern becomes ``[0-9]``: llama.cpp's schema-to-grammar converter does not
  support the escape and silently accepts any string instead.
* Under the small-model profile an id argument may be limited to the ids the context holds
  (:func:`limit_to_values`), and every free-text string (no enum, const, pattern or format)
  gets a ``maxLength``, and every open repeat in a pattern (``{3,}``) an upper bound
  (``{3,9}``), so a weak model cannot write a 512-token run of digits into one: it did, into
  ``^U[0-9]{4,}$``, at temperature 0. llama.cpp ignores ``maxLength`` next to a ``pattern``.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.tools import BaseTool

from tether.tools.arguments import args_model

REF_PREFIX = "#/$defs/"
FREE_TEXT_CHARS = 100
REPEAT_SLACK = 6
"""How much longer than its shortest form an open repeat may run under the small profile."""
_OPEN_REPEAT = re.compile(r"(?<!\\)\{(\d+),\}")
_CONSTRAINED = ("enum", "const", "pattern", "format", "maxLength")


def tool_arguments(tool: BaseTool) -> tuple[dict[str, Any], dict[str, Any]]:
    """A tool's arguments schema without its ``$defs``, and those ``$defs``."""
    if (schema := args_model(tool)) is None:
        return {"type": "object"}, {}
    full = copy.deepcopy(schema.model_json_schema())
    full.pop("title", None)
    full.setdefault("additionalProperties", False)
    defs = full.pop("$defs", {})
    return full, defs


def merge_defs(
    into: dict[str, Any], arguments: dict[str, Any], defs: dict[str, Any], owner: str
) -> dict[str, Any]:
    """Add ``defs`` to the root's ``into``; a name already taken by a different definition is
    renamed ``<owner>__<name>`` and the refs in ``arguments`` and ``defs`` follow. Returns
    ``arguments`` with its refs rewritten."""
    renamed = {
        name: f"{owner}__{name}" for name, spec in defs.items() if into.get(name, spec) != spec
    }
    if renamed:
        mapping = {REF_PREFIX + old: REF_PREFIX + new for old, new in renamed.items()}
        arguments = _rewrite_refs(arguments, mapping)
        defs = {renamed.get(k, k): _rewrite_refs(spec, mapping) for k, spec in defs.items()}
    into.update(defs)
    return arguments


def _rewrite_refs(node: Any, mapping: dict[str, str]) -> Any:
    if isinstance(node, dict):
        return {
            key: mapping.get(value, value) if key == "$ref" else _rewrite_refs(value, mapping)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_rewrite_refs(item, mapping) for item in node]
    return node


def for_grammar(node: Any, *, cap_free_text: bool) -> Any:
    """A copy with every pattern written for grammar engines and, when asked, every
    free-text string capped at :data:`FREE_TEXT_CHARS`."""
    if isinstance(node, list):
        return [for_grammar(item, cap_free_text=cap_free_text) for item in node]
    if not isinstance(node, dict):
        return node
    shaped = {
        key: (
            grammar_pattern(value, bounded=cap_free_text)
            if key == "pattern" and isinstance(value, str)
            else for_grammar(value, cap_free_text=cap_free_text)
        )
        for key, value in node.items()
    }
    if cap_free_text and _is_free_text(shaped):
        shaped["maxLength"] = FREE_TEXT_CHARS
    return shaped


def _is_free_text(node: dict[str, Any]) -> bool:
    kind = node.get("type")
    is_string = kind == "string" or (isinstance(kind, list) and "string" in kind)
    return is_string and not any(key in node for key in _CONSTRAINED)


def grammar_pattern(pattern: str, *, bounded: bool = False) -> str:
    """``\\d`` as ``[0-9]`` (``0-9`` inside a character class); every other escape kept.
    ``bounded``: every ``{n,}`` becomes ``{n,n+REPEAT_SLACK}``."""
    written = _digit_classes(pattern)
    if not bounded:
        return written
    return _OPEN_REPEAT.sub(lambda m: f"{{{m[1]},{int(m[1]) + REPEAT_SLACK}}}", written)


def _digit_classes(pattern: str) -> str:
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            pair = pattern[i : i + 2]
            out.append(("0-9" if in_class else "[0-9]") if pair == "\\d" else pair)
            i += 2
            continue
        if char == "[" and not in_class:
            in_class = True
        elif char == "]" and in_class:
            in_class = False
        out.append(char)
        i += 1
    return "".join(out)


def limit_to_values(node: Any, values: Mapping[str, Sequence[str]]) -> Any:
    """A copy where every string whose ``pattern`` has listed values takes one of them
    (``enum``) instead of any string of that shape (the small-model profile's grounded ids)."""
    if isinstance(node, list):
        return [limit_to_values(item, values) for item in node]
    if not isinstance(node, dict):
        return node
    allowed = values.get(node["pattern"]) if isinstance(node.get("pattern"), str) else None
    if allowed:
        kept = {k: v for k, v in node.items() if k not in ("pattern", "minLength", "maxLength")}
        return kept | {"enum": list(allowed)}
    return {key: limit_to_values(value, values) for key, value in node.items()}
