"""ToolRegistry: the tools an agent may call, validated calls, and runtime stats."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from pydantic import BaseModel, ValidationError

from tether.tools.decorator import tool as make_tool
from tether.tools.envelope import Envelope, error_envelope
from tether.tools.marks import ANSWERS
from tether.tools.results import cap_result, from_exception, from_return
from tether.tools.safe import json_safe
from tether.tools.stats import ToolStats

_GOT_CHARS = 200
"""How much of a refused argument value the error message quotes back to the model."""


class ToolRegistry:
    """Tools by name. Safe to change between steps and to use from several threads.

    ``invoke``/``ainvoke`` never raise for anything a tool or the model did wrong: bad
    arguments, unknown tools and tool exceptions all come back as an error :class:`Envelope`
    that says how to fix the call. A tool's return value is data; metadata comes only through
    :class:`~tether.tools.output.ToolOutput`. ``max_result_chars`` caps each result's data or
    message (:func:`~tether.tools.results.cap_result`); None leaves sizes to the caller.
    """

    def __init__(
        self,
        tools: Iterable[BaseTool | Callable[..., Any]] = (),
        *,
        clock: Callable[[], float] = time.perf_counter,
        max_result_chars: int | None = None,
    ) -> None:
        if max_result_chars is not None and max_result_chars < 1:
            raise ValueError("max_result_chars must be at least 1")
        self._max_result_chars = max_result_chars
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
        injected = set(schema.model_fields) - set(tool.tool_call_schema.model_fields)  # type: ignore[union-attr]
        if injected:  # tether fills none in: the model could only set them itself
            raise TypeError(
                f"tool {tool.name!r} has injected arguments ({', '.join(sorted(injected))}), "
                "which tether does not fill in; read the run from a config: RunnableConfig "
                "parameter (tether.tools.run_id_from) instead"
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

    def _unknown(self, name: str) -> str:
        return f"Unknown tool {name!r}. Available tools: {', '.join(self.names()) or 'none'}."

    # --- calls ------------------------------------------------------------------------------
    def invoke(
        self, name: str, args: Mapping[str, Any] | None, config: RunnableConfig | None = None
    ) -> Envelope:
        """Validate ``args`` against the tool's schema, run it and wrap what happened.

        The result is always an :class:`Envelope` of JSON-safe values (see
        :func:`tether.tools.safe.json_safe`); nothing a tool returns or raises escapes.
        """
        tool = self.get(name)
        if tool is None:
            return error_envelope(self._unknown(name), error_type="unknown_tool")
        started = self._clock()
        checked = validated(tool, args)
        if isinstance(checked, BaseModel):
            try:
                checked = from_return(_returned(tool.invoke(_input(tool, checked), config)))
            except Exception as exc:  # a tool's failure is an observation, never a crash
                checked = from_exception(tool.name, exc)
        return self._finish(name, checked, started)

    async def ainvoke(
        self, name: str, args: Mapping[str, Any] | None, config: RunnableConfig | None = None
    ) -> Envelope:
        """:meth:`invoke` for the async loop: same validation, envelope and stats, awaiting
        ``tool.ainvoke`` (a tool with only a sync body is run by LangChain in a thread)."""
        tool = self.get(name)
        if tool is None:
            return error_envelope(self._unknown(name), error_type="unknown_tool")
        started = self._clock()
        checked = validated(tool, args)
        if isinstance(checked, BaseModel):
            try:
                checked = from_return(_returned(await tool.ainvoke(_input(tool, checked), config)))
            except Exception as exc:
                checked = from_exception(tool.name, exc)
        return self._finish(name, checked, started)

    def check_arguments(self, name: str, args: Any) -> str | None:
        """Why ``args`` would be refused by tool ``name``, or None when they are valid."""
        tool = self.get(name)
        if tool is None:
            return self._unknown(name)
        checked = validated(tool, args)
        return checked["message"] if isinstance(checked, dict) else None

    def _finish(self, name: str, result: Envelope, started: float) -> Envelope:
        """Stamp latency, cap the size when asked, and record the call in the tool's stats."""
        latency = self._clock() - started
        result["meta"]["latency_s"] = round(latency, 6)
        if self._max_result_chars is not None:
            result = cap_result(result, self._max_result_chars)
        ok = result["status"] == "success"
        with self._lock:
            self._stats.setdefault(name, ToolStats()).record(ok, latency, result.get("message"))
        return result


def as_registry(tools: ToolRegistry | Iterable[Any] | None) -> ToolRegistry:
    """A registry from what a caller passed where one is expected: itself, or its tools."""
    if isinstance(tools, ToolRegistry):
        return tools
    if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Iterable | None):
        raise TypeError(f"expected a ToolRegistry or a list of tools, not {type(tools).__name__}")
    return ToolRegistry(tools or ())


def validated(tool: BaseTool, args: Any) -> BaseModel | Envelope:
    """The arguments parsed by the tool's schema, or a validation-error envelope."""
    if not isinstance(args, Mapping):
        return error_envelope(
            f"Arguments for {tool.name} must be a JSON object, got {type(args).__name__}. "
            f"Expected fields: {_fields_help(tool)}.",
            error_type="validation_error",
        )
    schema = tool.args_schema
    assert isinstance(schema, type) and issubclass(schema, BaseModel)  # checked on register
    try:
        return schema.model_validate(dict(args))
    except ValidationError as exc:
        return error_envelope(_validation_message(tool, exc), error_type="validation_error")
    except Exception as exc:  # a validator that raised something else, or unreadable args
        message = f"Invalid arguments for {tool.name}: {type(exc).__name__}."
        return error_envelope(message, error_type="validation_error")


def _input(tool: BaseTool, validated: BaseModel) -> dict[str, Any]:
    """The arguments; for a tool of tether's ``@tool``, a tool call carrying them, since it
    answers a call with the function's own return value as the artifact (:func:`_returned`)."""
    args = _call_args(validated)
    call = {"type": "tool_call", "id": "tether", "name": tool.name, "args": args}
    return call if (tool.metadata or {}).get(ANSWERS) else args


def _returned(answer: Any) -> Any:
    """What the tool returned: a tether tool's artifact, else the answer itself."""
    return answer.artifact if isinstance(answer, ToolMessage) else answer


def _call_args(validated: BaseModel) -> dict[str, Any]:
    """Validated values for the fields the schema declares (defaults filled in), each under
    the name the schema reads it by (its alias, if it has one), as the model gave it."""
    fields = type(validated).model_fields
    return {field.alias or name: getattr(validated, name) for name, field in fields.items()}


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
            got = repr(json_safe(err.get("input"), max_depth=2))
            got = got if len(got) <= _GOT_CHARS else f"{got[:_GOT_CHARS]}..."
            problems.append(f"field '{field}': {err['msg']} (got {got})")
    return (
        f"Invalid arguments for {tool.name}: {'; '.join(problems)}. "
        f"Expected fields: {_fields_help(tool)}. Fix the Action Input and call again."
    )
