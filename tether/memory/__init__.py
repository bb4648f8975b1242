"""Dual-buffer memory: rendering the buffers into a prompt, and counting tokens."""

from tether.memory.tokens import TiktokenCounter, TokenCounter, count_messages

__all__ = ["TiktokenCounter", "TokenCounter", "count_messages"]
