"""How world functions become tools: explicit schema, typed error outputs, optional faults.

A tool body raises :class:`ToolProblem` (or a pricing / calculation error) for anything the
model should fix or accept; :func:`make_tool` turns it into an error ToolOutput whose message
says why and what to do. Anything else that escapes is a real failure and goes to the
registry, which classifies it as transient or not.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from langchain_core.tools import BaseTool
from pydantic import BaseModel
from tether.tools import ErrorType, ToolOutput, error, tool

from tether_world.arith import CalculationError
from tether_world.faults import FaultInjector
from tether_world.pricing import PricingError


class ToolProblem(Exception):
    """A call the tool refuses or cannot serve; ``message`` tells the model how to go on."""

    def __init__(self, message: str, *, error_type: ErrorType = "tool_error", **meta: Any):
        super().__init__(message)
        self.message, self.error_type, self.meta = message, error_type, meta


def refused(message: str, **meta: Any) -> ToolProblem:
    """A call the current state forbids (e.g. cancelling a shipped order)."""
    return ToolProblem(message, error_type="refused", **meta)


def make_tool(
    fn: Callable[..., Any],
    schema: type[BaseModel],
    *,
    faults: FaultInjector | None = None,
    side_effects: bool = False,
) -> BaseTool:
    """A tool named after ``fn``, described by its docstring, validated by ``schema``.

    ``side_effects`` marks tools that change the world (tether asks for approval first)."""
    name = fn.__name__

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ToolProblem as problem:
            return _output(problem)
        except (PricingError, CalculationError) as exc:
            return error(str(exc))

    body = faults.wrap(name, run) if faults is not None else run
    return tool(
        name=name, description=inspect.getdoc(fn), args_schema=schema, side_effects=side_effects
    )(body)


def _output(problem: ToolProblem) -> ToolOutput:
    return error(problem.message, error_type=problem.error_type, **problem.meta)
