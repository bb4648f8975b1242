"""Tools: the registry, the result envelope and the decorator."""

from tether.tools.decorator import tool
from tether.tools.envelope import Envelope, error, success
from tether.tools.registry import ToolRegistry
from tether.tools.stats import ToolStats

__all__ = ["Envelope", "ToolRegistry", "ToolStats", "error", "success", "tool"]
