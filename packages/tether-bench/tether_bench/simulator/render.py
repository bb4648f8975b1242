"""Turn a decided turn into what an OpenAI-compatible server sends, and count its tokens.

A request that carries ``tools`` gets ``tool_calls`` (content null, finish_reason
``tool_calls``) as vLLM's hermes parser returns them; one with a JSON ``response_format`` gets
a JSON action; any other gets ReAct text (Thought, Action, Action Input, or Final Answer).
A fault keeps its kind in every protocol and takes that protocol's shape: for native tools a
call the model broke comes as text (the call written out, as a server's tool-call parser
returns what it cannot read and as the real runs show), an empty reply as empty content, and
text beside a call as both. Usage is counted
with tiktoken's cl100k_base over what was sent and what is returned, so every agent's prompt
is charged by the same rule.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import tiktoken
from tether.memory import MESSAGE_OVERHEAD, OFFLINE_ENCODING, TiktokenCounter

from tether_bench.simulator.reading import Protocol
from tether_bench.simulator.sessions import Turn

_COUNTER = TiktokenCounter()
_ENCODING = tiktoken.get_encoding(OFFLINE_ENCODING)


@dataclass(frozen=True)
class Reply:
    """The assistant message of one completion, with its finish reason and output text."""

    content: str | None
    tool_call: dict[str, Any] | None
    finish_reason: str

    @property
    def output_text(self) -> str:
        """What the completion tokens are counted over."""
        if self.tool_call is not None:
            fn = self.tool_call["function"]
            head = f"{self.content} " if self.content else ""
            return f"{head}{fn['name']} {fn['arguments']}"
        return self.content or ""

    def message(self) -> dict[str, Any]:
        if self.tool_call is not None:
            return {"role": "assistant", "content": self.content, "tool_calls": [self.tool_call]}
        return {"role": "assistant", "content": self.content, "tool_calls": []}


def arguments_text(turn: Turn) -> str:
    """The call's arguments as the model writes them: JSON, or broken JSON for ``bad_json``."""
    text = json.dumps(turn.arguments or {}, ensure_ascii=False)
    return corrupt(text, turn.shape) if turn.fault == "bad_json" else text


def corrupt(text: str, shape: float) -> str:
    """Broken JSON, one of two ways models break it: curly quotes, or the last brace missing."""
    if shape < 0.5:
        return _curly_quotes(text)
    return text[:-1]


def call_as_text(turn: Turn) -> str:
    """A native call written as text, as the real runs show one (a fenced JSON object)."""
    call = {"name": turn.tool, "arguments": turn.arguments or {}}
    return f"```json\n{json.dumps(call, ensure_ascii=False)}\n```"


def react_text(turn: Turn) -> str:
    """The turn as ReAct text; ``missing_input`` leaves out the Action Input line; an
    ``empty_reply`` is empty (``text_and_call`` is the ReAct shape itself: text, then the
    call)."""
    if turn.fault == "empty_reply":
        return ""
    if turn.kind == "final":
        return f"Thought: {turn.thought}\nFinal Answer: {turn.answer}"
    head = f"Thought: {turn.thought}\nAction: {turn.tool}"
    if turn.fault == "missing_input":
        return head
    return f"{head}\nAction Input: {arguments_text(turn)}"


def json_text(turn: Turn) -> str:
    """The turn as the JSON action a ``response_format`` asks for."""
    if turn.fault == "empty_reply":
        return ""
    if turn.kind == "final":
        action: dict[str, Any] = {"final_answer": turn.answer or ""}
    elif turn.fault == "missing_input":
        action = {"tool": turn.tool}
    else:
        action = {"tool": turn.tool, "arguments": turn.arguments or {}}
    text = json.dumps({"thought": turn.thought, "action": action}, ensure_ascii=False)
    if turn.fault == "text_and_call":
        return f"{turn.thought}\n{text}"
    return corrupt(text, turn.shape) if turn.fault == "bad_json" else text


def render(turn: Turn, *, protocol: Protocol, call_id: str, stop: list[str] | None = None) -> Reply:
    """The reply in the request's protocol; ReAct text is cut at the first stop sequence."""
    if protocol == "react":
        return Reply(_apply_stop(react_text(turn), stop), None, "stop")
    if protocol == "json":
        return Reply(json_text(turn), None, "stop")
    if turn.fault == "empty_reply":
        return Reply(content="", tool_call=None, finish_reason="stop")
    if turn.kind == "action" and turn.fault == "bad_json":
        return Reply(content=call_as_text(turn), tool_call=None, finish_reason="stop")
    if turn.kind == "action":
        arguments = "" if turn.fault == "missing_input" else arguments_text(turn)
        call = {
            "id": call_id,
            "type": "function",
            "function": {"name": turn.tool, "arguments": arguments},
        }
        text = turn.thought if turn.fault == "text_and_call" else None
        return Reply(content=text, tool_call=call, finish_reason="tool_calls")
    return Reply(content=turn.answer or "", tool_call=None, finish_reason="stop")


def echo(turn: Turn) -> tuple[str, ...]:
    """Pieces of the model's own reply, to tell them apart from feedback in the next prompt."""
    pieces = [turn.thought, turn.answer or ""]
    if turn.kind == "action":
        pieces += [arguments_text(turn), f"Action: {turn.tool}"]
        if turn.fault == "bad_json":
            pieces += call_as_text(turn).splitlines()
    return tuple(p for p in pieces if len(p) > 2)


def _curly_quotes(text: str) -> str:
    """Straight double quotes become “ and ” in turn, as the seed saw Qwen write them."""
    out, opening = [], True
    for char in text:
        if char == '"':
            out.append("“" if opening else "”")
            opening = not opening
        else:
            out.append(char)
    return "".join(out)


def _apply_stop(text: str, stop: list[str] | None) -> str:
    cut = len(text)
    for sequence in stop or []:
        if sequence and (at := text.find(sequence)) >= 0:
            cut = min(cut, at)
    return text[:cut]


def call_id(session: str, index: int) -> str:
    """A tool call id that is the same every time the same session reaches the same turn."""
    return "call_" + hashlib.sha256(f"{session}\x1f{index}".encode()).hexdigest()[:24]


def prompt_tokens(body: dict[str, Any]) -> int:
    """Tokens of the request: each message's text (and tool calls) plus the tool schemas."""
    total = 0
    for message in body.get("messages") or []:
        total += MESSAGE_OVERHEAD + _COUNTER.count(_message_text(message))
    if body.get("tools"):
        total += _COUNTER.count(json.dumps(body["tools"], ensure_ascii=False))
    return total


def token_ids(text: str) -> list[int]:
    """The tokens ``/tokenize`` reports: cl100k_base, the same count as the usage."""
    return _ENCODING.encode(text, disallowed_special=())


def completion_tokens(reply: Reply) -> int:
    return _COUNTER.count(reply.output_text) + 1  # +1: the end-of-turn token


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        parts = [p.get("text", "") for p in content if isinstance(p, dict)]
        text = "".join(str(p) for p in parts)
    else:
        text = str(content or "")
    if message.get("tool_calls"):
        text += json.dumps(message["tool_calls"], ensure_ascii=False)
    return text
