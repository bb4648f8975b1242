"""tether: a tool-calling agent loop under control, as a LangGraph StateGraph.

The public names are loaded on first use, so ``import tether`` compiles nothing and starts
no server, database or benchmark code.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tether.errors import (
        ModelCallError,
        ScriptExhaustedError,
        SettingsError,
        TaskError,
        TetherError,
        TransientToolError,
    )
    from tether.graph.rules import Rule, RuleDecision
    from tether.llm.model import make_chat_model
    from tether.loop.builder import build_graph
    from tether.settings import AgentSettings
    from tether.tools import Envelope, ToolRegistry, ToolStats, error, success, tool

_EXPORTS = {
    "AgentSettings": "tether.settings",
    "Envelope": "tether.tools",
    "ModelCallError": "tether.errors",
    "Rule": "tether.graph.rules",
    "RuleDecision": "tether.graph.rules",
    "ScriptExhaustedError": "tether.errors",
    "SettingsError": "tether.errors",
    "TaskError": "tether.errors",
    "TetherError": "tether.errors",
    "ToolRegistry": "tether.tools",
    "ToolStats": "tether.tools",
    "TransientToolError": "tether.errors",
    "build_graph": "tether.loop.builder",
    "error": "tether.tools",
    "make_chat_model": "tether.llm.model",
    "success": "tether.tools",
    "tool": "tether.tools",
}

__all__ = [
    "AgentSettings",
    "Envelope",
    "ModelCallError",
    "Rule",
    "RuleDecision",
    "ScriptExhaustedError",
    "SettingsError",
    "TaskError",
    "TetherError",
    "ToolRegistry",
    "ToolStats",
    "TransientToolError",
    "build_graph",
    "error",
    "make_chat_model",
    "success",
    "tool",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tether' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
