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
    from tether.agent_base import RunOutline
    from tether.async_agent import AsyncAgent
    from tether.decisions.rules import Rule, RuleDecision
    from tether.errors import (
        ModelCallError,
        ModelServerError,
        ScriptExhaustedError,
        SettingsError,
        TaskError,
        TetherError,
        TransientToolError,
    )
    from tether.graph.builder import build_graph
    from tether.graph.diagram import mermaid
    from tether.llm.model import make_chat_model
    from tether.settings import AgentSettings, RunSettings, load_settings
    from tether.state import TraceEvent
    from tether.tools import Envelope, ToolRegistry, ToolStats, error, success, tool
    from tether.vocabulary import CAUSES, STATUSES, Status, StatusInfo, StopCause, TraceEventName

PUBLIC_MODULES = (
    "tether",
    "tether.control",
    "tether.dburl",
    "tether.decisions",
    "tether.decisions.grounding",
    "tether.extras",
    "tether.llm",
    "tether.memory",
    "tether.testing",
    "tether.tools",
)
"""The modules whose ``__all__`` is tether's public API (the sibling packages use only these)."""


__all__ = [
    "CAUSES",
    "PUBLIC_MODULES",
    "STATUSES",
    "Agent",
    "AgentSettings",
    "AsyncAgent",
    "Envelope",
    "ModelCallError",
    "ModelServerError",
    "Rule",
    "RuleDecision",
    "RunObserver",
    "RunOutline",
    "RunResult",
    "RunSettings",
    "ScriptExhaustedError",
    "SettingsError",
    "Status",
    "StatusInfo",
    "StopCause",
    "TaskError",
    "TetherError",
    "ToolRegistry",
    "ToolStats",
    "TraceEvent",
    "TraceEventName",
    "TransientToolError",
    "UnknownRunError",
    "build_graph",
    "error",
    "load_settings",
    "make_chat_model",
    "mermaid",
    "success",
    "tool",
]

__getattr__ = lazy_getattr(__name__, globals())
