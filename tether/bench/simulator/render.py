"""Turn a decided turn into what an OpenAI-compatible server sends, and count its tokens.

A request that carries ``tools`` gets ``tool_calls`` (content null, finish_reason
``tool_calls``) as vLLM's hermes parser returns them; one without gets ReAct text (Thought,
Action, Action Input, or Final Answer). Usage is counted with tiktoken's cl100k_base over what
was sent and what is returned, so every agent's prompt is charged by the same rule.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import tiktoken

from tether.bench.simulator.sessions import Turn
from tether.memory.tokens import MESSAGE_OVERHEAD, OFFLINE_ENCODING, TiktokenCounter

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
            return f"{fn['name']} {fn['arguments']}"
        return self.content or ""

    def message(self) -> dict[str, Any]:
        if self.tool_call is not None:
            return {"role": "assistant", "content": None, "tool_calls": [self.tool_call]}
        return {"role": "assistant", "content": self.content, "tool_calls": []}


def react_text(turn: Turn) -> str:
    """The turn as ReAct text."""
    if turn.kind == "final":
        return f"Thought: {turn.thought}\nFinal Answer: {turn.answer}"
    if turn.kind == "text":
        return f"Thought: {turn.thought}"
    return f"Thought: {turn.thought}\nAction: {turn.tool}\nAction Input: {turn.arguments_text}"


def render(turn: Turn, *, tools_mode: bool, call_id: str, stop: list[str] | None = None) -> Reply:
    """The reply for this request's mode; ReAct text is cut at the first stop sequence."""
    if not tools_mode:
        return Reply(
            content=_apply_stop(react_text(turn), stop), tool_call=None, finish_reason="stop"
        )
    if turn.kind == "action":
        call = {
            "id": call_id,
            "type": "function",
            "function": {"name": turn.tool, "arguments": turn.arguments_text or "{}"},
        }
        return Reply(content=None, tool_call=call, finish_reason="tool_calls")
    text = turn.answer if turn.kind == "final" else turn.thought
    return Reply(content=text or "", tool_call=None, finish_reason="stop")


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
