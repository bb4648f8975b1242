"""Tools: the registry, what tools return, and the envelope tether builds from it."""

from tether.tools.decorator import tool
from tether.tools.envelope import Envelope, ErrorType, error_envelope, success_envelope
from tether.tools.marks import has_side_effects
from tether.tools.output import ToolOutput, error, success
from tether.tools.registry import ToolRegistry
from tether.tools.results import DEFAULT_MAX_RESULT_CHARS, cap_result
from tether.tools.runinfo import RUN_ID_KEY, run_id_from
from tether.tools.safe import json_safe
from tether.tools.stats import ToolStats

__all__ = [
    "DEFAULT_MAX_RESULT_CHARS",
    "RUN_ID_KEY",
    "Envelope",
    "ErrorType",
    "ToolOutput",
    "ToolRegistry",
    "ToolStats",
    "cap_result",
    "error",
    "error_envelope",
    "has_side_effects",
    "json_safe",
    "run_id_from",
    "success",
    "success_envelope",
    "tool",
]
