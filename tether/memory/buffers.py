"""The two memory buffers and the reducer that keeps their windows.

Reasoning (what the model thought and chose) and tool results (what it got back) live apart,
so the prompt can show them as two labelled sections. Windows are enforced here, in the state's
reducer, so no node can forget to trim.
"""

from __future__ import annotations

from typing import Any, TypedDict


class ReasoningEntry(TypedDict):
    step: int
    thought: str
    action: str | None
    action_input: dict[str, Any] | None


class ToolResultEntry(TypedDict):
    step: int
    tool: str
    arguments: dict[str, Any]
    result: dict[str, Any]


class WindowedAppend(TypedDict):
    """An update that appends ``items`` and keeps the last ``window`` entries."""

    append: list[Any]
    window: int


def windowed(items: list[Any], window: int) -> WindowedAppend:
    return {"append": items, "window": window}


def keep_window(current: list[Any] | None, update: WindowedAppend | list[Any]) -> list[Any]:
    """State reducer: a list replaces the buffer; a WindowedAppend appends and trims."""
    if isinstance(update, list):
        return list(update)
    merged = [*(current or []), *update["append"]]
    return merged[-update["window"] :]
