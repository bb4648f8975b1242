"""Marks a tool carries in its LangChain metadata."""

from __future__ import annotations

from langchain_core.tools import BaseTool

SIDE_EFFECTS = "side_effects"
ANSWERS = "tether_answers"
"""A tool made by tether's ``@tool``: a tool call's artifact is what its function returned."""


def has_side_effects(tool: BaseTool) -> bool:
    """Whether the tool changes the world (payments, cancellations): approval gates use it."""
    return bool((tool.metadata or {}).get(SIDE_EFFECTS))
