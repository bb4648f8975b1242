"""Dual-buffer memory: rendering the buffers into a prompt, and counting tokens."""

from tether.memory.render import ResultView
from tether.memory.tokens import (
    MESSAGE_OVERHEAD,
    OFFLINE_ENCODING,
    TiktokenCounter,
    TokenCounter,
    count_messages,
    tool_call_text,
)

__all__ = [
    "MESSAGE_OVERHEAD",
    "OFFLINE_ENCODING",
    "ResultView",
    "TiktokenCounter",
    "TokenCounter",
    "count_messages",
    "tool_call_text",
]
