"""Turn a model reply into a proposal: an action, a final answer, or a clear parse error.

The ReAct grammar, as tether reads it (a reply is a sequence of lines)::

    reply    := preamble? section* observation?
    section  := LABEL rest-of-line continuation-line*
    LABEL    := ("Thought" | "Action" | "Action Input" | "Final Answer") digits? ":"
    observation := "Observation:" ... (the model imagining a tool result: ignored)

- A label counts only at the start of a line (leading spaces allowed; ``:`` or ``：``).
  ``Final Answer:`` in the middle of a Thought is just text.
- Inside a Thought or a Final Answer, lines within an unclosed double quote (``"`` or
  ``“…”``), within a code fence, or starting with ``>`` are quoted text, never labels: a
  Thought quoting a tool result's ``Action:`` line does not call that tool.
- A usable reply has exactly one Action (a tool name: letters, digits, ``_ . -``) followed by
  exactly one Action Input (one JSON object, see :mod:`tether.llm.jsonread`), or exactly one
  non-empty Final Answer. Anything else is a parse failure whose message goes back to the
  model: both an Action and a Final Answer, two Actions, an Action without an Action Input,
  an empty Final Answer, and any reply cut off by the length limit (``truncated=True``), in
  every protocol (ReAct, JSON, native tool calls).

The parser reads each line once with anchored patterns, so its time is linear in the reply.
"""

from __future__ import annotations

import json
import re
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.tools import BaseTool

from tether.llm.jsonread import JsonReadError, read_object
from tether.state import Proposal
from tether.tools.arguments import effective_arguments
from tether.tools.safe import json_safe

EXPECTED_FORMAT = "Thought, then Action + Action Input (a JSON object), or Final Answer"
TRUNCATED = (
    "your reply was cut off by the length limit before it ended, so it was not used; "
    "reply again, shorter"
)

_LABEL = re.compile(
    r"(?P<label>Thought|Action[ \t]*Input|Action|Final[ \t]*Answer|Observation)"
    r"[ \t]*(?:\d+[ \t]*)?[:：]"
)
_INLINE_INPUT = re.compile(r"Action[ \t]*Input[ \t]*[:：]")
_TOOL_NAME = re.compile(r"[\w.\-]{1,64}")
_NAME_TRIM = "`'\"“”‘’*[]() .。\u3000\t"
_FREE_TEXT = ("Thought", "Final Answer")
_LABEL_NAMES = {
    "Thoug": "Thought",
    "Actio": "Action",
    "Final": "Final Answer",
    "Obser": "Observation",
}


def canonical_arguments(arguments: dict[str, Any]) -> str:
    """Arguments as canonical JSON, so equal calls compare equal."""
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def fingerprint(tool: str, arguments: dict[str, Any]) -> str:
    return f"{tool}{canonical_arguments(arguments)}"


def call_fingerprint(tool: BaseTool | None, name: str, arguments: dict[str, Any]) -> str:
    """The fingerprint of the call as the tool will receive it (see
    :func:`~tether.tools.arguments.effective_arguments`), or of the arguments as proposed
    when they do not validate."""
    return fingerprint(name, effective_arguments(tool, arguments) or arguments)


def parse_arguments(text: str) -> dict[str, Any]:
    """Read a JSON object out of ``text``, repairing drift outside strings; ValueError (a
    :class:`~tether.llm.jsonread.JsonReadError`) when it cannot be read without guessing."""
    return read_object(text)


def parse_react(text: str, *, truncated: bool = False) -> Proposal:
    """Parse a ReAct reply by the grammar in the module docstring. ``truncated``: the reply
    was cut at max_tokens (finish reason ``length``), which is always a parse failure."""
    sections, quoted_tail = _sections(text)
    thought = "\n".join(body for label, body in sections if label == "Thought").strip()
    if not thought and sections and sections[0][0] == "":
        thought = sections[0][1].strip()
    if truncated:
        return invalid_proposal(text, thought, TRUNCATED)
    labels = [label for label, _ in sections]
    actions, finals = labels.count("Action"), labels.count("Final Answer")
    if actions and finals:
        error = "the reply has both an Action and a Final Answer; give one of them"
        return invalid_proposal(text, thought, error)
    if actions > 1 or finals > 1:
        return invalid_proposal(text, thought, "one Action or one Final Answer per reply")
    if actions:
        return _action(text, thought, sections)
    if labels.count("Action Input"):
        return invalid_proposal(text, thought, "Action Input without an Action line before it")
    if finals:
        answer = next(body for label, body in sections if label == "Final Answer").strip()
        if not answer:
            return invalid_proposal(text, thought, "the Final Answer is empty")
        return {"kind": "final", "thought": thought, "answer": answer, "raw": text}
    error = f"no Action or Final Answer found (expected {EXPECTED_FORMAT})"
    if quoted_tail:
        error += "; an unclosed quote or code fence in your text hid the lines after it"
    return invalid_proposal(text, thought or text.strip(), error)


def _action(text: str, thought: str, sections: list[tuple[str, str]]) -> Proposal:
    labels = [label for label, _ in sections]
    at = labels.index("Action")
    line = sections[at][1]
    inline = _INLINE_INPUT.search(line)
    name_text = line[: inline.start()] if inline else line
    tool = name_text.strip().strip(_NAME_TRIM)
    if not tool:
        return invalid_proposal(text, thought, "the Action line names no tool")
    if not _TOOL_NAME.fullmatch(tool):
        error = f"the Action line must name one tool and nothing else, got {tool[:80]!r}"
        return invalid_proposal(text, thought, error)
    inputs = [body for label, body in sections[at + 1 :] if label == "Action Input"]
    if inline:
        inputs.insert(0, line[inline.end() :])
    if labels[:at].count("Action Input"):
        return invalid_proposal(text, thought, "Action Input must come after the Action line")
    if not inputs:
        return invalid_proposal(text, thought, f"Action {tool!r} has no Action Input")
    if len(inputs) > 1:
        return invalid_proposal(text, thought, "one Action Input per Action")
    try:
        arguments = parse_arguments(inputs[0])
    except ValueError as exc:
        return invalid_proposal(text, thought, str(exc))
    return action_proposal(text, thought, tool, arguments)


def _sections(text: str) -> tuple[list[tuple[str, str]], bool]:
    """The reply's sections as (label, body) up to an Observation; label "" is text before
    the first label. Also whether the last free-text section ended inside a quote."""
    sections: list[tuple[str, list[str]]] = [("", [])]
    quote = _QuoteState()
    for line in text.splitlines():
        label = sections[-1][0]
        if label in _FREE_TEXT and quote.inside:
            sections[-1][1].append(line)
            quote.feed(line)
            continue
        match = _LABEL.match(line.lstrip(" \t\u3000"))
        if match is None:
            sections[-1][1].append(line)
        else:
            found = _LABEL_NAMES[match.group("label")[:5]]
            if found == "Action" and "Input" in match.group("label"):
                found = "Action Input"
            if found == "Observation":
                break
            quote = _QuoteState()
            sections.append((found, [line.lstrip(" \t\u3000")[match.end() :]]))
        if sections[-1][0] in _FREE_TEXT:
            quote.feed(sections[-1][1][-1])
    bodies = [(label, "\n".join(lines)) for label, lines in sections]
    if not bodies[0][1].strip():
        bodies.pop(0)
    return bodies, quote.inside


class _QuoteState:
    """Whether free text is inside a double quote or a code fence, line by line."""

    def __init__(self) -> None:
        self.straight = False
        self.curly = 0
        self.fence = False

    @property
    def inside(self) -> bool:
        return self.straight or self.curly > 0 or self.fence

    def feed(self, line: str) -> None:
        if line.lstrip().startswith("```"):
            self.fence = not self.fence
            return
        if self.fence:
            return
        self.straight ^= line.count('"') % 2 == 1
        self.curly = max(0, self.curly + line.count("“") - line.count("”"))


def parse_native(message: AIMessage, *, truncated: bool = False) -> Proposal:
    """Use the server's one tool call; plain text with none is the final answer. Several
    calls in one reply, or a reply cut at max_tokens (``truncated``), are parse failures."""
    text = message.text
    if truncated:
        return invalid_proposal(text, text.strip(), TRUNCATED)
    if len(message.tool_calls) > 1:
        # tether asks for one call (parallel_tool_calls=false) and runs one per step: running
        # the first and dropping the rest would hide calls the model meant to make.
        names = ", ".join(str(c.get("name"))[:40] for c in message.tool_calls[:4])
        error = f"one tool call per reply; got {len(message.tool_calls)} ({names})"
        return invalid_proposal(text, text.strip(), error)
    if message.tool_calls:
        call = message.tool_calls[0]
        name = str(call.get("name") or "")
        if not _TOOL_NAME.fullmatch(name):
            return invalid_proposal(text, text.strip(), f"tool call names no tool: {name[:80]!r}")
        args = call.get("args")
        if not isinstance(args, dict):
            return invalid_proposal(text, text.strip(), "tool call arguments are not an object")
        return action_proposal(text, text.strip(), name, args)
    if message.invalid_tool_calls:
        bad = message.invalid_tool_calls[0]
        error = f"tool call {bad.get('name')!r}: {bad.get('error')}"
        return invalid_proposal(text, text.strip(), error)
    if text.strip():
        return {"kind": "final", "thought": "", "answer": text.strip(), "raw": text}
    return invalid_proposal(text, "", "empty reply: no tool call and no answer")


def action_proposal(raw: str, thought: str, tool: str, arguments: dict[str, Any]) -> Proposal:
    """A tool call, with the fingerprint the loop's repeat checks compare. The arguments are
    made JSON-safe here (a 100-bit integer becomes a marked string), so every proposal can be
    checkpointed and the tool's schema refuses what was converted."""
    safe = json_safe(arguments)
    checked = safe if isinstance(safe, dict) else {}
    return {
        "kind": "action",
        "thought": thought,
        "tool": tool,
        "arguments": checked,
        "fingerprint": fingerprint(tool, checked),
        "raw": raw,
    }


def invalid_proposal(raw: str, thought: str, error: str) -> Proposal:
    """A reply the loop cannot use; ``error`` becomes the model's next observation."""
    return {"kind": "invalid", "thought": thought, "error": error, "raw": raw}


__all__ = [
    "EXPECTED_FORMAT",
    "JsonReadError",
    "action_proposal",
    "call_fingerprint",
    "canonical_arguments",
    "fingerprint",
    "invalid_proposal",
    "parse_arguments",
    "parse_native",
    "parse_react",
]
