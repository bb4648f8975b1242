"""ToolRegistry: the tools an agent may call, validated calls, and runtime stats."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from pydantic import BaseModel, ValidationError

from tether.tools.decorator import tool as make_tool
from tether.tools.envelope import Envelope, error, is_envelope, success
from tether.tools.failures import describe, is_transient
from tether.tools.stats import ToolStats


class ToolRegistry:
    """Tools by name. Safe to change between steps and to use from several threads.

    ``invoke`` never raises for anything a tool or the model did wrong: bad arguments, unknown
    tools and tool exceptions all come back as an error :class:`Envelope` that says how to fix
    the call.
    """

    def __init__(
        self,
        tools: Iterable[BaseTool | Callable[..., Any]] = (),
        *,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._tools: dict[str, BaseTool] = {}
        self._stats: dict[str, ToolStats] = {}
        self._lock = threading.RLock()
        self._clock = clock
        for item in tools:
            self.register(item)

    # --- membership -------------------------------------------------------------------------
    def register(self, item: BaseTool | Callable[..., Any], *, replace: bool = False) -> BaseTool:
        """Add a tool (a BaseTool with an args_schema, or a typed function)."""
        tool = item if isinstance(item, BaseTool) else make_tool(item)
        schema = tool.args_schema
        if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
            raise TypeError(
                f"tool {tool.name!r} needs an explicit pydantic args_schema "
                "(without one, arguments are silently dropped)"
            )
        with self._lock:
            if tool.name in self._tools and not replace:
                raise ValueError(f"a tool named {tool.name!r} is already registered")
            self._tools[tool.name] = tool
            self._stats.setdefault(tool.name, ToolStats())
        return tool

    def unregister(self, name: str) -> None:
        """Remove a tool; its stats are kept."""
        with self._lock:
            if name not in self._tools:
                raise KeyError(f"no tool named {name!r}; registered: {self.names()}")
            del self._tools[name]

    def names(self) -> list[str]:
        with self._lock:
            return sorted(self._tools)

    def tools(self) -> list[BaseTool]:
        """A snapshot of the registered tools, in name order."""
        with self._lock:
            return [self._tools[name] for name in sorted(self._tools)]

    def get(self, name: str) -> BaseTool | None:
        with self._lock:
            return self._tools.get(name)

    def __contains__(self, name: object) -> bool:
        with self._lock:
            return name in self._tools

    def __len__(self) -> int:
        with self._lock:
            return len(self._tools)

    # --- stats ------------------------------------------------------------------------------
    def stats(self, name: str) -> ToolStats:
        """A copy of one tool's stats (also for tools since unregistered)."""
        with self._lock:
            if name not in self._stats:
                raise KeyError(f"no stats for {name!r}; known tools: {sorted(self._stats)}")
            return replace(self._stats[name])

    def all_stats(self) -> dict[str, ToolStats]:
        with self._lock:
            return {name: replace(stats) for name, stats in sorted(self._stats.items())}

    def _unknown(self, name: str) -> str:
        return f"Unknown tool {name!r}. Available tools: {', '.join(self.names()) or 'none'}."

    # --- calls ------------------------------------------------------------------------------
    def invoke(
        self, name: str, args: Mapping[str, Any] | None, config: RunnableConfig | None = None
    ) -> Envelope:
        """Validate ``args`` against the tool's schema, run it and wrap what happened."""
        tool = self.get(name)
        if tool is None:
            return error(self._unknown(name), error_type="unknown_tool")
        started = self._clock()
        result = self._run(tool, args, config)
        return self._finish(name, result, self._clock() - started)

    async def ainvoke(
        self, name: str, args: Mapping[str, Any] | None, config: RunnableConfig | None = None
    ) -> Envelope:
        """:meth:`invoke` for async runs: the tool is awaited, not run in a thread."""
        tool = self.get(name)
        if tool is None:
            return error(self._unknown(name), error_type="unknown_tool")
        started = self._clock()
        validated = _validate(tool, args)
        if isinstance(validated, dict):
            result = validated
        else:
            try:
                value = await tool.ainvoke(_call_args(validated), config=config)
            except Exception as exc:
                result = _failure(tool, exc)
            else:
                result = _wrap(value)
        return self._finish(name, result, self._clock() - started)

    def _finish(self, name: str, result: Envelope, latency: float) -> Envelope:
        result["meta"].setdefault("latency_s", round(latency, 6))
        ok = result["status"] == "success"
        with self._lock:
            self._stats.setdefault(name, ToolStats()).record(ok, latency, result.get("message"))
        return result

    def check_arguments(self, name: str, args: Any) -> str | None:
        """Why ``args`` would be refused by tool ``name``, or None when they are valid."""
        tool = self.get(name)
        if tool is None:
            return self._unknown(name)
        checked = _validate(tool, args)
        return checked["message"] if isinstance(checked, dict) else None

    def _run(
        self, tool: BaseTool, args: Mapping[str, Any] | None, config: RunnableConfig | None
    ) -> Envelope:
        validated = _validate(tool, args)
        if isinstance(validated, dict):
            return validated
        try:
            value = tool.invoke(_call_args(validated), config=config)
        except Exception as exc:  # a tool's failure is an observation, never a crash
            return _failure(tool, exc)
        return _wrap(value)


def _failure(tool: BaseTool, exc: Exception) -> Envelope:
    message = f"{tool.name} failed: {describe(exc)}"
    if is_transient(exc):
        return error(message, error_type="transient")
    return error(message)


def _wrap(value: Any) -> Envelope:
    if is_envelope(value):
        return {**value, "meta": dict(value["meta"])}  # type: ignore[typeddict-item]
    return success(value)


def _validate(tool: BaseTool, args: Any) -> BaseModel | Envelope:
    """The arguments parsed by the tool's schema, or a validation-error envelope."""
    if not isinstance(args, Mapping):
        return error(
            f"Arguments for {tool.name} must be a JSON object, got {type(args).__name__}. "
            f"Expected fields: {_fields_help(tool)}.",
            error_type="validation_error",
        )
    schema = tool.args_schema
    assert isinstance(schema, type) and issubclass(schema, BaseModel)  # checked on register
    try:
        return schema.model_validate(dict(args))
    except ValidationError as exc:
        return error(_validation_message(tool, exc), error_type="validation_error")


def _call_args(validated: BaseModel) -> dict[str, Any]:
    """Validated values for the fields the schema declares (defaults filled in)."""
    return {name: getattr(validated, name) for name in type(validated).model_fields}


def _fields_help(tool: BaseTool) -> str:
    schema = tool.args_schema
    assert isinstance(schema, type) and issubclass(schema, BaseModel)
    parts = []
    for name, info in schema.model_fields.items():
        need = "required" if info.is_required() else "optional"
        hint = f": {info.description}" if info.description else ""
        parts.append(f"{name} ({need}){hint}")
    return "; ".join(parts) or "none"


def _validation_message(tool: BaseTool, exc: ValidationError) -> str:
    problems = []
    for err in exc.errors():
        field = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        if err["type"] == "missing":
            problems.append(f"missing required field '{field}'")
        elif err["type"] == "extra_forbidden":
            problems.append(f"unexpected field '{field}'")
        else:
            problems.append(f"field '{field}': {err['msg']} (got {err.get('input')!r})")
    return (
        f"Invalid arguments for {tool.name}: {'; '.join(problems)}. "
        f"Expected fields: {_fields_help(tool)}. Fix the Action Input and call again."
    )
