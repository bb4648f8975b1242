"""tether: a tool-calling agent loop under control, as a LangGraph StateGraph."""

from tether.errors import (
    ModelCallError,
    ScriptExhaustedError,
    SettingsError,
    TaskError,
    TetherError,
    TransientToolError,
)
from tether.graph.builder import build_graph
from tether.graph.rules import Rule, RuleDecision
from tether.llm.model import make_chat_model
from tether.settings import AgentSettings
from tether.tools import Envelope, ToolRegistry, ToolStats, error, success, tool

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
