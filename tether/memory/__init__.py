"""Dual-buffer memory and token counting."""

from tether.memory.buffers import ReasoningEntry, ToolResultEntry, keep_window, windowed
from tether.memory.tokens import TiktokenCounter, TokenCounter, count_messages

__all__ = [
    "ReasoningEntry",
    "TiktokenCounter",
    "TokenCounter",
    "ToolResultEntry",
    "count_messages",
    "keep_window",
    "windowed",
]
