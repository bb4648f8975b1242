"""What one model or tool call tells the tether wrappers around it, in process: an outer
wrapper sees only the response the inner ones return, so what an inner one did (closed the
call for a last answer, answered in place of the model, ended the run, refused a tool call)
is kept in a record the outermost opens and the inner ones share (a context variable: the
wrappers of one call run in one context), never in the messages."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from tether.decisions import Proposal, ToolResult, Usage, Verdict


@dataclass
class ModelCall:
    """One model call as tether's wrappers made it."""

    closing: Verdict | None = None  # the cap whose last answer the request asks for
    answered: bool = False  # a tether wrapper answered in place of the model: nothing spent
    ended: bool = False  # a tether wrapper ended the run with this call's reply
    spent: Usage | None = None  # the usage after the budget's last pass (an answer sent back
    budgeted: bool = False  # is a second pass, whose update replaces the first's)


@dataclass
class ToolCallRecord:
    """One tool call as tether's wrappers ran it."""

    call_id: str | None = None  # a tool that runs an agent of its own opens records of its own
    gate: str | None = None  # recall, repeat or refuse: tether answered in place of the call
    result: ToolResult | None = None  # the outcome tether wrote (the gate's, a write's failure)
    proposal: Proposal | None = None  # the call as the decisions see it, read once
    read: tuple[Any, Any] | None = None  # the request, and as tether's wrappers read it


_MODEL: ContextVar[ModelCall | None] = ContextVar("tether_model_call", default=None)
_TOOL: ContextVar[ToolCallRecord | None] = ContextVar("tether_tool_call", default=None)


@contextmanager
def model_call() -> Iterator[ModelCall]:
    """The record of the model call now being made (opened by the outermost wrapper)."""
    current = _MODEL.get()
    if current is not None:
        yield current
        return
    current = ModelCall()
    token = _MODEL.set(current)
    try:
        yield current
    finally:
        _MODEL.reset(token)


@contextmanager
def tool_call(call_id: str | None) -> Iterator[ToolCallRecord]:
    """The record of the tool call now running (opened by the outermost wrapper)."""
    current = _TOOL.get()
    if current is not None and current.call_id == call_id:
        yield current
        return
    current = ToolCallRecord(call_id)
    token = _TOOL.set(current)
    try:
        yield current
    finally:
        _TOOL.reset(token)
