"""Tools: the registry, what tools return, and the envelope tether builds from it."""

from tether.tools.decorator import tool
from tether.tools.envelope import Envelope
from tether.tools.output import ToolOutput, error, success
from tether.tools.registry import ToolRegistry
from tether.tools.results import DEFAULT_MAX_RESULT_CHARS, cap_result
from tether.tools.safe import json_safe
from tether.tools.stats import ToolStats

__all__ = [
    "DEFAULT_MAX_RESULT_CHARS",
    "Envelope",
    "ToolOutput",
    "ToolRegistry",
    "ToolStats",
    "cap_result",
    "error",
    "json_safe",
    "success",
    "tool",
]
