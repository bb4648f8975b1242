"""Turn a model reply into a proposal: an action, a final answer, or a clear parse error.

Small models drift from the format in predictable ways (the design note's pitfall 3): Chinese
or curly quotes inside JSON, full-width colons and commas, code fences, trailing commas,
single-quoted JSON. Repairs are tried from the gentlest up, so a value is only rewritten when
the JSON cannot be read otherwise; the last resort is the json-repair library.
"""

from __future__ import annotations

import json
import re
from typing import Any

import json_repair
from langchain_core.messages import AIMessage

from tether.state import Proposal

_THOUGHT = re.compile(r"Thought\s*[:：]\s*(.*?)(?=\n\s*(?:Action|Final Answer)\s*[:：]|\Z)", re.S)
_ACTION = re.compile(r"Action\s*[:：]\s*(.+)")
_ACTION_INPUT = re.compile(r"Action\s*Input\s*[:：]\s*(.*)", re.S)
_FINAL = re.compile(r"Final\s*Answer\s*[:：]\s*(.*)", re.S)
_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```\s*$")
_CURLY_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "‘": "'", "’": "'"})
_FULL_WIDTH = str.maketrans({"：": ":", "，": ",", "｛": "{", "｝": "}", "［": "[", "］": "]"})

EXPECTED_FORMAT = "Thought, then Action + Action Input (a JSON object), or Final Answer"


def canonical_arguments(arguments: dict[str, Any]) -> str:
    """Arguments as canonical JSON, so equal calls compare equal."""
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def fingerprint(tool: str, arguments: dict[str, Any]) -> str:
    return f"{tool}{canonical_arguments(arguments)}"


def parse_arguments(text: str) -> dict[str, Any]:
    """Read a JSON object out of ``text``, repairing common drift; ValueError if impossible."""
    candidate = _FENCE.sub("", text.strip()).strip()
    start = candidate.find("{")
    if start < 0:
        start = candidate.find("｛")
    if start < 0:
        raise ValueError("Action Input is not a JSON object")
    candidate = candidate[start:]
    attempts = (
        lambda s: s,
        lambda s: s.translate(_CURLY_QUOTES),
        lambda s: _outside_strings(s.translate(_CURLY_QUOTES), _FULL_WIDTH),
    )
    for fix in attempts:
        try:
            value, _ = json.JSONDecoder().raw_decode(fix(candidate))
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    repaired = json_repair.loads(_outside_strings(candidate.translate(_CURLY_QUOTES), _FULL_WIDTH))
    if isinstance(repaired, dict) and (repaired or candidate.strip() in ("{}", "｛｝")):
        return repaired
    raise ValueError(f"Action Input could not be read as a JSON object: {text.strip()[:200]!r}")


def _outside_strings(text: str, table: dict[int, str]) -> str:
    """Translate characters outside double-quoted strings only, so values keep their
    own punctuation (an address's full-width comma stays as written)."""
    out, in_string, escaped = [], False, False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            out.append(char)
            continue
        in_string = char == '"'
        out.append(char.translate(table))
    return "".join(out)


def _clean_tool_name(text: str) -> str:
    name = text.strip().splitlines()[0].strip()
    return name.strip("`'\"“”‘’*[]() .。").strip()


TRUNCATED = "the reply was cut off at max_tokens before it was complete"


def parse_react(text: str, *, truncated: bool = False) -> Proposal:
    """Parse a ReAct reply. An Action before a Final Answer wins: text after the Action is
    the model imagining the tool's result. A reply cut off at max_tokens is a failure."""
    if truncated:
        return invalid_proposal(text, "", TRUNCATED)
    body = text.split("Observation:", 1)[0]
    thought_match = _THOUGHT.search(body)
    thought = thought_match.group(1).strip() if thought_match else ""
    action = _ACTION.search(body)
    final = _FINAL.search(body)
    if action and (not final or action.start() < final.start()):
        tool = _clean_tool_name(action.group(1))
        input_match = _ACTION_INPUT.search(body, action.end())
        if not tool:
            return invalid_proposal(text, thought, "the Action line names no tool")
        if not input_match:
            return invalid_proposal(text, thought, f"Action {tool!r} has no Action Input")
        try:
            arguments = parse_arguments(input_match.group(1))
        except ValueError as exc:
            return invalid_proposal(text, thought, str(exc))
        return action_proposal(text, thought, tool, arguments)
    if final:
        return {"kind": "final", "thought": thought, "answer": final.group(1).strip(), "raw": text}
    if not thought and text.strip():
        thought = text.strip()
    error = f"no Action or Final Answer found (expected {EXPECTED_FORMAT})"
    return invalid_proposal(text, thought, error)


def parse_native(message: AIMessage, *, truncated: bool = False) -> Proposal:
    """Use the server's tool_calls; plain text with none is the final answer."""
    text = message.text
    if truncated:
        return invalid_proposal(text, "", TRUNCATED)
    if message.tool_calls:
        call = message.tool_calls[0]
        return action_proposal(text, text.strip(), call["name"], dict(call["args"] or {}))
    if message.invalid_tool_calls:
        bad = message.invalid_tool_calls[0]
        error = f"tool call {bad.get('name')!r}: {bad.get('error')}"
        return invalid_proposal(text, text.strip(), error)
    if text.strip():
        return {"kind": "final", "thought": "", "answer": text.strip(), "raw": text}
    return invalid_proposal(text, "", "empty reply: no tool call and no answer")


def action_proposal(raw: str, thought: str, tool: str, arguments: dict[str, Any]) -> Proposal:
    """A tool call, with the fingerprint the loop's repeat checks compare."""
    return {
        "kind": "action",
        "thought": thought,
        "tool": tool,
        "arguments": arguments,
        "fingerprint": fingerprint(tool, arguments),
        "raw": raw,
    }


def invalid_proposal(raw: str, thought: str, error: str) -> Proposal:
    """A reply the loop cannot use; ``error`` becomes the model's next observation."""
    return {"kind": "invalid", "thought": thought, "error": error, "raw": raw}
