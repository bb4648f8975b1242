"""How the simulated model reads a request: one text, the tools it lists, the results it shows.

Nothing here knows which agent sent the request. Every message is flattened into one text
(an assistant tool call is written ``name(arguments)``), and tool results are found by their
content: the JSON envelope every tool returns (``{"status": ..., ...}``), attributed to the
last tool name written before it. tether's result list, AgentExecutor's scratchpad and
create_agent's tool messages all put the call before its result, so they read the same.

The request's ``tools`` array is read like the rest of the prompt: each definition is written
into the text as ``name: description`` with its parameters, so what an agent says only in a
tool definition (create_agent's tool descriptions) reaches the model too. What the request
constrains is read as well (:mod:`tether_bench.simulator.constraints`): a JSON schema in
``response_format``, or ``tool_choice``/``strict`` on native tools, rules out the faults
constrained decoding cannot produce.

Timing is not content. tether stamps every envelope with the call's wall-clock duration
(``meta.latency_s``), which differs between two equal calls; the text is read with every such
figure as 0 (:func:`untimed`) before anything else looks at it, so the numbers it shows, its
lines (what is new since the last prompt), the results and their comparison depend only on
what the agent sent, never on how long its tools took.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any, Literal

from tether_bench.simulator.constraints import (
    CallShape,
    Constraints,
    answer_tool,
    as_list,
    call_shapes,
    constraints,
    is_json_format,
)

Protocol = Literal["react", "tools", "json"]

_ENVELOPE_START = re.compile(r'\{\s*"status"\s*:\s*"(?:success|error)"')
_NUMBER = re.compile(r"(?<![\d.])-?\d+(?:\.\d+)?(?![\d.])")
_LISTED = re.compile(r"^\s*(?:-\s*)?([A-Za-z_][A-Za-z0-9_]*)\s*[:(]", re.MULTILINE)
_NOT_TOOLS = frozenset(
    {"thought", "action", "question", "observation", "final", "task", "arguments", "args"}
    | {"human", "ai", "user", "assistant", "system"}  # a transcript's speakers, not tools
)
_DECODER = json.JSONDecoder()
TIMING_KEYS = ("latency_s",)
"""Envelope meta keys that hold a wall-clock figure: read as 0, whatever the agent sent."""
_TIMING = re.compile(
    r'(\\?"(?:' + "|".join(map(re.escape, TIMING_KEYS)) + r')\\?"\s*:\s*)'
    r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
)
ATTRIBUTION_WINDOW = 600
"""Most characters between a tool's name and its result for the two to be read as a pair."""


@dataclass(frozen=True)
class Observation:
    """One tool result shown in the prompt, with the call text written before it."""

    tool: str | None
    call_text: str
    envelope: dict[str, Any]

    @property
    def ok(self) -> bool:
        return self.envelope.get("status") == "success"

    def call_holds(self, value: object) -> bool:
        """The call written before the result holds this value (see :func:`holds`)."""
        return holds(self.call_text, value)

    def signature(self) -> str:
        """The result without its meta (what the tool answered, not how the loop saw it)."""
        body = {k: v for k, v in self.envelope.items() if k != "meta"}
        return f"{self.tool}|{self.call_text.strip()}|{json.dumps(body, sort_keys=True)}"


@dataclass(frozen=True)
class PromptView:
    """What one request shows the model."""

    text: str
    protocol: Protocol
    tools: frozenset[str]
    observations: tuple[Observation, ...]
    numbers: frozenset[Decimal] = field(default=frozenset())
    lines: frozenset[str] = field(default=frozenset())
    constraints: Constraints = field(default=Constraints())
    shapes: tuple[CallShape, ...] = ()
    """The callable tools in the order the request gives them, with their arguments' limits
    (read only when the decoder admits nothing but a call)."""
    answer_tool: tuple[str, str] | None = None
    """A native tool the model answers through, and the string argument its answer goes in
    (:func:`answer_tool`): LangChain's structured output (``ToolStrategy``) offers one."""

    def offers(self, tool: str) -> bool:
        """The tool is listed: in ``tools``, in the schema, or on a listing line of the text
        (a name merely mentioned in another tool's description does not count)."""
        if self.tools:
            return tool in self.tools
        return re.search(rf"(?<![\w]){re.escape(tool)}(?![\w])", self.text) is not None


def read_request(body: dict[str, Any], known_tools: Iterable[str] = ()) -> PromptView:
    """The view of an OpenAI-style chat request (messages, tools, response_format)."""
    messages = body.get("messages")
    definitions = tool_definitions(body.get("tools"))
    text = untimed("\n\n".join(filter(None, [definitions, flatten(as_list(messages))])))
    listed = _request_tools(body) or _listed_in_text(text)
    protocol: Protocol = "tools" if body.get("tools") else "react"
    if is_json_format(body.get("response_format")):
        protocol = "json"
    names = set(known_tools) | listed
    return PromptView(
        text=text,
        protocol=protocol,
        tools=frozenset(listed),
        observations=tuple(observations(text, names)),
        numbers=frozenset(numbers_in(text)),
        lines=frozenset(line.strip() for line in text.splitlines() if line.strip()),
        constraints=constraints(body),
        shapes=call_shapes(body),
        answer_tool=answer_tool(body),
    )


def tool_definitions(tools: Any) -> str:
    """The native tool definitions as the model reads them: one ``name: description`` block
    per tool, with its parameters (a chat template writes them into the prompt too)."""
    blocks: list[str] = []
    for tool in as_list(tools):
        fn = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            continue
        head = f"{fn['name']}: {fn.get('description') or ''}".strip()
        params = fn.get("parameters")
        if params:
            head += "\n  parameters: " + json.dumps(params, ensure_ascii=False, sort_keys=True)
        blocks.append(head)
    return "\n".join(blocks)


def flatten(messages: Sequence[Any]) -> str:
    """Every message's text, tool calls written as ``name(arguments)``, in order."""
    parts: list[str] = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if isinstance(content, list):
            parts.append("".join(str(p.get("text", "")) for p in content if isinstance(p, dict)))
        elif content:
            parts.append(str(content))
        for call in message.get("tool_calls") or []:
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict):
                parts.append(f"{fn.get('name', '')}({fn.get('arguments', '')})")
    return "\n\n".join(parts)


def untimed(text: str) -> str:
    """``text`` with every timing figure of an envelope's meta (:data:`TIMING_KEYS`, in JSON or
    in JSON written inside a JSON string) replaced by 0: two prompts that differ only in how
    long their calls took read the same."""
    return _TIMING.sub(r"\g<1>0", text)


@lru_cache(maxsize=4096)
def written_forms(value: str) -> frozenset[str]:
    """The ways a value can stand in a prompt: as is, and as a JSON string's content, once or
    twice escaped (JSON written inside JSON), with non-ASCII letters kept or as ``\\uXXXX``:
    a value with a quote, a backslash or a Chinese letter is escaped inside a call's
    arguments, and the escaped text is what the prompt shows."""
    forms = {value}
    for _ in range(2):
        forms |= {json.dumps(f, ensure_ascii=a)[1:-1] for f in forms for a in (False, True)}
    return frozenset(f.casefold() for f in forms)


def holds(text: str, value: object) -> bool:
    """The text shows this value in one of its :func:`written_forms` (case folded), so a
    value written inside JSON is compared as the same JSON would write it."""
    folded = text.casefold()
    return any(form in folded for form in written_forms(str(value)))


def envelopes(text: str) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """Each tool result written in the text, outermost only: (start, end, envelope). One cut
    short (not valid JSON) is skipped: the model cannot read it either."""
    previous_end = 0
    for match in _ENVELOPE_START.finditer(text):
        start = match.start()
        if start < previous_end:
            continue  # nested inside the previous envelope
        try:
            value, end = _DECODER.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        if is_envelope(value):
            yield start, end, value
            previous_end = end


def observations(text: str, tool_names: Iterable[str]) -> list[Observation]:
    """Tool results in the text, in order, each with the call written just before it."""
    names = sorted({n for n in tool_names if n}, key=len, reverse=True)
    pattern = re.compile(r"(?<![\w])(" + "|".join(map(re.escape, names)) + r")(?![\w])")
    found: list[Observation] = []
    previous_end = 0
    for start, end, value in envelopes(text):
        window_start = max(previous_end, start - ATTRIBUTION_WINDOW)
        window = text[window_start:start]
        mentions = list(pattern.finditer(window)) if names else []
        tool = mentions[-1].group(1) if mentions else None
        call_text = window[mentions[-1].end() :] if mentions else ""
        found.append(Observation(tool=tool, call_text=call_text, envelope=value))
        previous_end = end
    return found


def is_envelope(value: Any) -> bool:
    """A tool result as every tool writes it: a status, and data or a message.

    Checked here on the content alone, so the simulator depends on no agent's code."""
    return (
        isinstance(value, dict)
        and value.get("status") in ("success", "error")
        and ("data" in value or "message" in value)
    )


def numbers_in(text: str) -> set[Decimal]:
    """Every decimal number written in the text."""
    values: set[Decimal] = set()
    for token in _NUMBER.findall(text):
        try:
            values.add(Decimal(token))
        except InvalidOperation:  # pragma: no cover - the pattern only matches numbers
            continue
    return values


def _request_tools(body: dict[str, Any]) -> set[str]:
    names: set[str] = set()
    for tool in body.get("tools") or []:
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            names.add(fn["name"])
    fmt = body.get("response_format")
    if is_json_format(fmt):
        names |= _schema_consts(fmt)
    return names


def _schema_consts(node: Any) -> set[str]:
    """Tool names a JSON action schema allows: every ``{"tool": {"const": name}}``."""
    found: set[str] = set()
    if isinstance(node, dict):
        tool = node.get("tool")
        if isinstance(tool, dict) and isinstance(tool.get("const"), str):
            found.add(tool["const"])
        for value in node.values():
            found |= _schema_consts(value)
    elif isinstance(node, list):
        for value in node:
            found |= _schema_consts(value)
    return found


def _listed_in_text(text: str) -> set[str]:
    """Names written as a listing line (``- name: ...``, ``name: ...``, ``name(...)``)."""
    first_result = _ENVELOPE_START.search(text)
    head = text[: first_result.start()] if first_result else text
    return {m for m in _LISTED.findall(head) if m.lower() not in _NOT_TOOLS}
