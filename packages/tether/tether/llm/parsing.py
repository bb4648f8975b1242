"""Turn a model reply into a proposal: an action, a final answer, or a clear parse error.

The ReAct grammar, as tether reads it (a reply is a sequence of lines)::

    reply    := preamble? section* observation?
    section  := LABEL rest-of-line continuation-line*
    LABEL    := ("Thought" | "Action" | "Action Input" | "Final Answer") digits? ":"
    observation := "Observation:" ... (the model imagining a tool result: ignored)
    action   := "Action:" TOOL  "Action Input:" input
              | "Action:" TOOL "(" arguments ")"            (repair: call_syntax)
    input    := JSON-object
              | JSON-object prose                           (repair: json_then_prose)
              | one-value                                   (repair: bare_value)

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
- The repairs read a reply off that format that has exactly one reading, only for an offered
  tool (``repair_for``; the ``repair_output`` setting), and name themselves in the proposal's
  ``repairs``. ``json_then_prose``: prose after the object, with no brace or bracket, no
  quoted key and colon, not starting with a comma, colon or quote (``{"order_id": "ORD-1"}
  (looking it up)``). ``bare_value``: for a tool with exactly one required field, one value
  on one line, quoted or not (``"ORD-1"``, ``ORD-1``), with no brace or bracket outside
  quotes and no key (``order_id=ORD-1``). ``call_syntax``: ``Action:
  query_order(order_id="ORD-1")`` and no Action Input, its values literals; a positional
  value only for a tool with exactly one required field. Two objects, keys after an early
  brace, a bare value for a tool with no or several required fields, an unknown tool: still
  parse failures. The JSON protocol reads its object, and the native protocol a call's
  arguments, with the first two as well.

The parser reads each line once with anchored patterns, so its time is linear in the reply.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.tools import BaseTool

from tether.llm.jsonread import read_object
from tether.state import Proposal
from tether.tools.arguments import effective_arguments, requirements
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
_CALL = re.compile(r"([\w.\-]{1,64})[ \t]*\(")
_WRAPS = {'"': '"', "'": "'", "`": "`", "“": "”", "‘": "’"}
_NOT_BARE = re.compile(r"[{}\[\]｛｝［］]")
_KEYED = re.compile(r"[A-Za-z_][\w.\-]*[ \t]*(?:=|[:：](?!//))")
_JSON_NAMES = {"true": True, "false": False, "null": None}
_LABEL_NAMES = {
    "Thoug": "Thought",
    "Actio": "Action",
    "Final": "Final Answer",
    "Obser": "Observation",
}


_CANONICAL = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))
"""``json.dumps`` with these options builds this encoder anew at every call."""


def canonical_arguments(arguments: dict[str, Any]) -> str:
    """Arguments as canonical JSON, so equal calls compare equal."""
    return _CANONICAL.encode(arguments)


def fingerprint(tool: str, arguments: dict[str, Any]) -> str:
    return f"{tool}{canonical_arguments(arguments)}"


def call_fingerprint(tool: BaseTool | None, name: str, arguments: dict[str, Any]) -> str:
    """The fingerprint of the call as the tool will receive it (see
    :func:`~tether.tools.arguments.effective_arguments`), or of the arguments as proposed
    when they do not validate."""
    return fingerprint(name, effective_arguments(tool, arguments) or arguments)


def parse_arguments(
    text: str, repairs: list[str] | None = None, *, prose: bool = False
) -> dict[str, Any]:
    """Read a JSON object out of ``text``, repairing drift outside strings; ValueError (a
    :class:`~tether.llm.jsonread.JsonReadError`) when it cannot be read without guessing.
    ``prose``: prose may follow the object; ``repairs`` collects the repairs' names."""
    return read_object(text, repairs, prose=prose)


def parse_react(
    text: str, *, truncated: bool = False, repair_for: Sequence[BaseTool] = ()
) -> Proposal:
    """Parse a ReAct reply by the grammar in the module docstring. ``truncated``: the reply
    was cut at max_tokens (finish reason ``length``), which is always a parse failure.
    ``repair_for``: the offered tools, when replies with one reading are repaired (the
    ``repair_output`` setting); empty: they are parse failures."""
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
        return _action(text, thought, sections, {tool.name: tool for tool in repair_for})
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


def _action(
    text: str, thought: str, sections: list[tuple[str, str]], offered: dict[str, BaseTool]
) -> Proposal:
    labels = [label for label, _ in sections]
    at = labels.index("Action")
    line = sections[at][1]
    inline = _INLINE_INPUT.search(line)
    name_text = line[: inline.start()] if inline else line
    call = read_call(name_text, offered) if "Action Input" not in labels and not inline else None
    if call is not None:
        return action_proposal(text, thought, *call, repairs=["call_syntax"])
    tool = name_text.strip().strip(_NAME_TRIM)
    if not tool:
        return invalid_proposal(text, thought, "the Action line names no tool")
    if not _TOOL_NAME.fullmatch(tool):
        error = f"the Action line must name one tool and nothing else, got {tool[:80]!r}"
        error += "; its arguments go in Action Input, as a JSON object" if "(" in tool else ""
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
    repairs: list[str] = []
    try:
        arguments = parse_arguments(inputs[0], repairs, prose=tool in offered)
    except ValueError as exc:
        bare = bare_value(inputs[0], offered.get(tool))
        if bare is None:
            return invalid_proposal(text, thought, str(exc))
        arguments, repairs = bare, ["bare_value"]
    return action_proposal(text, thought, tool, arguments, repairs=repairs)


def bare_value(value: Any, tool: BaseTool | None) -> dict[str, Any] | None:
    """``{field: value}`` when ``tool`` has exactly one required field and ``value`` is one
    value: a number or boolean, or one line of text (``"ORD-1"``, ``ORD-1``) with no brace
    or bracket outside quotes, no key (``order_id=...``, ``order_id: ...``) and no unclosed
    quote. None when it has no single reading."""
    fields = [name for name, _ in requirements(tool)]
    if isinstance(value, str):
        value = _one_value(value.strip())
    if len(fields) != 1 or value is None or isinstance(value, dict | list):
        return None
    return {fields[0]: value}


def _one_value(text: str) -> str | None:
    if not text or "\n" in text or "\r" in text:
        return None
    closer = _WRAPS.get(text[0])
    if closer is None:
        return None if _NOT_BARE.search(text) or _KEYED.match(text) else text
    inner = text[1:-1]
    if len(text) < 2 or text[-1] != closer or text[0] in inner or closer in inner:
        return None
    return inner.strip() or None


def read_call(text: str, offered: dict[str, BaseTool]) -> tuple[str, dict[str, Any]] | None:
    """``tool(key=value, ...)`` for an offered tool, its values literals (Python's, or JSON's
    ``true``/``false``/``null``); one positional value only for a tool with exactly one
    required field. None when ``text`` is not such a call."""
    source = text.strip().strip("`").strip()
    match = _CALL.match(source)
    if match is None or match.group(1) not in offered or not source.endswith(")"):
        return None
    tool = offered[match.group(1)]
    try:
        node = ast.parse("f" + source[match.end(1) :], mode="eval").body
        if not isinstance(node, ast.Call) or not all(kw.arg for kw in node.keywords):
            return None
        arguments = {str(kw.arg): _literal(kw.value) for kw in node.keywords}
        values = [_literal(arg) for arg in node.args]
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        return None  # not literals, or nested past the parser's limits
    fields = [name for name, _ in requirements(tool)]
    if values and (len(values) > 1 or len(fields) != 1 or fields[0] in arguments):
        return None
    return tool.name, arguments | dict(zip(fields, values, strict=False))


def _literal(node: ast.expr) -> Any:
    if isinstance(node, ast.Name) and node.id in _JSON_NAMES:
        return _JSON_NAMES[node.id]
    return ast.literal_eval(node)


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


def parse_native(
    message: AIMessage, *, truncated: bool = False, repair_for: Sequence[BaseTool] = ()
) -> Proposal:
    """Use the server's one tool call; plain text with none is the final answer. Several
    calls in one reply, or a reply cut at max_tokens (``truncated``), are parse failures.
    ``repair_for`` (see :func:`parse_react`): the one call's arguments may be an object
    followed by prose, or a bare value."""
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
            repaired = _repaired_call(text, name, args, repair_for)
            error = "tool call arguments are not an object"
            return repaired or invalid_proposal(text, text.strip(), error)
        return action_proposal(text, text.strip(), name, args)
    if message.invalid_tool_calls:
        bad = message.invalid_tool_calls[0]
        one = len(message.invalid_tool_calls) == 1
        repaired = _repaired_call(text, str(bad.get("name")), bad.get("args"), repair_for)
        error = f"tool call {bad.get('name')!r}: {bad.get('error')}"
        return (repaired if one else None) or invalid_proposal(text, text.strip(), error)
    if text.strip():
        return {"kind": "final", "thought": "", "answer": text.strip(), "raw": text}
    return invalid_proposal(text, "", "empty reply: no tool call and no answer")


def _repaired_call(
    text: str, name: str, args: Any, repair_for: Sequence[BaseTool]
) -> Proposal | None:
    """A native call to an offered tool whose arguments are no object: an object followed
    by prose, or a bare value; None when they have no single reading."""
    tool = next((tool for tool in repair_for if tool.name == name), None)
    if tool is None:
        return None
    repairs: list[str] = []
    try:
        arguments = read_object(args, repairs, prose=True) if isinstance(args, str) else None
    except ValueError:
        arguments = None
    if arguments is None:
        arguments, repairs = bare_value(args, tool), ["bare_value"]
    if arguments is None:
        return None
    return action_proposal(text, text.strip(), name, arguments, repairs=repairs)


def action_proposal(
    raw: str, thought: str, tool: str, arguments: dict[str, Any], *, repairs: Sequence[str] = ()
) -> Proposal:
    """A tool call, with the fingerprint the loop's repeat checks compare. The arguments are
    made JSON-safe here (a 100-bit integer becomes a marked string), so every proposal can be
    checkpointed and the tool's schema refuses what was converted. ``repairs``: the names of
    the repairs that made the reply readable, kept for the trace."""
    safe = json_safe(arguments)
    checked = safe if isinstance(safe, dict) else {}
    proposal: Proposal = {
        "kind": "action",
        "thought": thought,
        "tool": tool,
        "arguments": checked,
        "fingerprint": fingerprint(tool, checked),
        "raw": raw,
    }
    if repairs:
        proposal["repairs"] = list(repairs)
    return proposal


def invalid_proposal(raw: str, thought: str, error: str) -> Proposal:
    """A reply the loop cannot use; ``error`` becomes the model's next observation."""
    return {"kind": "invalid", "thought": thought, "error": error, "raw": raw}
