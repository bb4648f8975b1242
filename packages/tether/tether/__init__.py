"""tether: a tool-calling agent loop under control, as a LangGraph StateGraph.

The public names are loaded on first use, so ``import tether`` compiles nothing and starts
no server or database. The public API is what this package and the modules listed in
:data:`PUBLIC_MODULES` export in their ``__all__``; every other module is internal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether._exports import lazy_getattr

if TYPE_CHECKING:
    from tether.agent import Agent, RunObserver, RunResult, UnknownRunError
    from tether.decisions.rules import Rule, RuleDecision
    from tether.errors import (
        ModelCallError,
        ScriptExhaustedError,
        SettingsError,
        TaskError,
        TetherError,
        TransientToolError,
    )
    from tether.llm.model import make_chat_model
    from tether.loop.builder import build_graph
    from tether.loop.diagram import mermaid
    from tether.settings import AgentSettings, RunSettings, load_settings
    from tether.state import TraceEvent
    from tether.tools import Envelope, ToolRegistry, ToolStats, error, success, tool
    from tether.toolsets import Toolset, load_toolset, toolset_names

PUBLIC_MODULES = (
    "tether",
    "tether.control",
    "tether.dburl",
    "tether.extras",
    "tether.llm",
    "tether.memory",
    "tether.testing",
    "tether.tools",
)
"""The modules whose ``__all__`` is tether's public API (the sibling packages use only these)."""

_EXPORTS = {
    "Agent": "tether.agent",
    "AgentSettings": "tether.settings",
    "Envelope": "tether.tools",
    "ModelCallError": "tether.errors",
    "Rule": "tether.decisions.rules",
    "RuleDecision": "tether.decisions.rules",
    "RunObserver": "tether.agent",
    "RunResult": "tether.agent",
    "RunSettings": "tether.settings",
    "ScriptExhaustedError": "tether.errors",
    "SettingsError": "tether.errors",
    "TaskError": "tether.errors",
    "TetherError": "tether.errors",
    "ToolRegistry": "tether.tools",
    "ToolStats": "tether.tools",
    "Toolset": "tether.toolsets",
    "TraceEvent": "tether.state",
    "TransientToolError": "tether.errors",
    "UnknownRunError": "tether.agent",
    "build_graph": "tether.loop.builder",
    "error": "tether.tools",
    "load_settings": "tether.settings",
    "load_toolset": "tether.toolsets",
    "make_chat_model": "tether.llm.model",
    "mermaid": "tether.loop.diagram",
    "success": "tether.tools",
    "tool": "tether.tools",
    "toolset_names": "tether.toolsets",
}

__all__ = [
    "PUBLIC_MODULES",
    "Agent",
    "AgentSettings",
    "Envelope",
    "ModelCallError",
    "Rule",
    "RuleDecision",
    "RunObserver",
    "RunResult",
    "RunSettings",
    "ScriptExhaustedError",
    "SettingsError",
    "TaskError",
    "TetherError",
    "ToolRegistry",
    "ToolStats",
    "Toolset",
    "TraceEvent",
    "TransientToolError",
    "UnknownRunError",
    "build_graph",
    "error",
    "load_settings",
    "load_toolset",
    "make_chat_model",
    "mermaid",
    "success",
    "tool",
    "toolset_names",
]

__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())
