"""Several tether middleware as one LangChain middleware.

``create_agent`` wraps each middleware's ``wrap_model_call`` and ``wrap_tool_call`` in a
tracing span of its own, on every call: six middleware cost six spans per model call and
five per tool call, more CPU than the controls themselves. :class:`TetherMiddleware` runs
its parts' hooks nested in list order (the first part is the outermost), exactly as
``create_agent`` would, inside one span: each part's own code, under one layer. The parts'
fields stay channels of their own, as each part declares them.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypedDict, cast, get_type_hints

from langchain.agents.middleware.types import (
    AgentMiddleware,
    ContextT,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    ResponseT,
)
from langchain_core.messages import AIMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from langchain_tether.common import (
    AsyncToolHandler,
    ToolHandler,
    ToolResponse,
)
from langchain_tether.kept import signed
from langchain_tether.layer import ToolLayer, ToolSteps

ModelHandler = Callable[[ModelRequest[Any]], ModelResponse[Any]]
AsyncModelHandler = Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]
ModelResult = ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]
ModelLayer = Callable[[ModelRequest[Any], list[dict[str, Any]]], ModelResult]
AsyncModelLayer = Callable[[ModelRequest[Any], list[dict[str, Any]]], Awaitable[ModelResult]]
HOOKS = tuple(
    f"{a}{h}"
    for h in ("before_agent", "before_model", "after_model", "after_agent")
    for a in ("", "a")
)


def _overrides(part: AgentMiddleware[Any, Any, Any], hook: str) -> bool:
    return getattr(type(part), hook) is not getattr(AgentMiddleware, hook)


@signed
class TetherMiddleware(AgentMiddleware[Any, ContextT, ResponseT]):
    """``parts`` (tether middleware with wrap hooks only) run as one middleware: model calls
    through each part's ``wrap_model_call`` (or ``awrap_model_call``), the first part
    outermost, tool calls through each part's ``wrap_tool_call``; the state schema is the
    union of the parts'. A part's state
    update is written as ``create_agent`` writes it: those of the layers inside a part that
    called its handler again are the last call's.
    """

    def __init__(self, parts: Sequence[AgentMiddleware[Any, Any, Any]]) -> None:
        super().__init__()
        names = [part.name for part in parts]
        if len(set(names)) != len(names):
            raise ValueError(f"each part once: {names}")
        for part in parts:
            hooks = [hook for hook in HOOKS if _overrides(part, hook)]
            if hooks or getattr(part, "tools", None):
                raise ValueError(f"{part.name} has hooks a composed part cannot run: {hooks}")
        self.parts = list(parts)
        self.state_schema = cast(type, TypedDict("TetherMiddlewareState", merged_hints(parts)))  # type: ignore[operator]
        self._model = [p for p in parts if _overrides(p, "wrap_model_call")]
        self._amodel = [p for p in parts if _overrides(p, "awrap_model_call")]
        self._tool = _layers([p for p in parts if _overrides(p, "wrap_tool_call")])
        self._atool = _layers([p for p in parts if _overrides(p, "awrap_tool_call")])

    # --- model calls ----------------------------------------------------------------------
    # Each layer is a partial of the next, built from the innermost out: a layer that named
    # itself (a recursive closure) would make a reference cycle per call, kept with all it
    # holds (the request, LangGraph's runtime) until the garbage collector finds it.

    def wrap_model_call(
        self, request: ModelRequest[ContextT], handler: ModelHandler
    ) -> ModelResponse[Any] | ExtendedModelResponse[Any]:
        run: ModelLayer = functools.partial(_model_handler, handler)
        for part in reversed(self._model):
            run = functools.partial(_model_layer, part, run)
        updates: list[dict[str, Any]] = []
        return self._composed(_unwrapped(run(request, updates), updates), updates)

    async def awrap_model_call(
        self, request: ModelRequest[ContextT], handler: AsyncModelHandler
    ) -> ModelResponse[Any] | ExtendedModelResponse[Any]:
        run: AsyncModelLayer = functools.partial(_amodel_handler, handler)
        for part in reversed(self._amodel):
            run = functools.partial(_amodel_layer, part, run)
        updates: list[dict[str, Any]] = []
        result = await run(request, updates)
        return self._composed(_unwrapped(result, updates), updates)

    # --- tool calls -----------------------------------------------------------------------

    # Parts in a row whose tool hooks are in steps (``ToolSteps``) run as one layer: one
    # reading of the answer and one Command for all of them.

    def wrap_tool_call(self, request: ToolCallRequest, handler: ToolHandler) -> ToolResponse:
        run = handler
        for layer in reversed(self._tool):
            run = functools.partial(layer.wrap_tool_call, handler=run)
        return run(request)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: AsyncToolHandler
    ) -> ToolResponse:
        run = handler
        for layer in reversed(self._atool):
            run = functools.partial(layer.awrap_tool_call, handler=run)
        return await run(request)

    def _composed(
        self, response: ModelResponse[Any], updates: list[dict[str, Any]]
    ) -> ModelResponse[Any] | ExtendedModelResponse[Any]:
        """The parts' updates as one, inner first, as ``create_agent`` applies them in turn."""
        if not updates:
            return response
        merged: dict[str, Any] = {}
        for update in updates:
            merged |= update
        command: Command[Any] = Command(update=merged)
        return ExtendedModelResponse(model_response=response, command=command)


def merged_hints(parts: Sequence[AgentMiddleware[Any, Any, Any]]) -> dict[str, Any]:
    """Every part's state fields, with their annotations."""
    hints: dict[str, Any] = {}
    for part in parts:
        hints |= get_type_hints(part.state_schema, include_extras=True)
    return hints


def _layers(parts: list[AgentMiddleware[Any, Any, Any]]) -> list[Any]:
    """The tool call's layers, the outermost first: each run of parts in a row whose tool
    hooks are in steps, as one :class:`ToolLayer`; any other part, a layer of its own."""
    layers: list[Any] = []
    for part in parts:
        if not _stepped(part):
            layers.append(part)
        elif layers and isinstance(layers[-1], list):
            layers[-1].append(part)
        else:
            layers.append([part])
    return [ToolLayer(layer) if isinstance(layer, list) else layer for layer in layers]


def _stepped(part: AgentMiddleware[Any, Any, Any]) -> bool:
    return isinstance(part, ToolSteps) and all(
        getattr(type(part), hook) is getattr(ToolSteps, hook)
        for hook in ("wrap_tool_call", "awrap_tool_call")
    )


def _model_handler(
    handler: ModelHandler, request: ModelRequest[Any], into: list[dict[str, Any]]
) -> ModelResult:
    return handler(request)


async def _amodel_handler(
    handler: AsyncModelHandler, request: ModelRequest[Any], into: list[dict[str, Any]]
) -> ModelResult:
    return await handler(request)


def _model_layer(
    part: AgentMiddleware[Any, Any, Any],
    inner: ModelLayer,
    request: ModelRequest[Any],
    into: list[dict[str, Any]],
) -> ModelResult:
    """``part``'s model call, ``inner`` the layers inside it; their updates go ``into``."""
    kept: list[dict[str, Any]] = []

    def call(next_request: ModelRequest[Any]) -> ModelResponse[Any]:
        kept.clear()  # a part that calls again keeps the last call's updates
        return _unwrapped(inner(next_request, kept), kept)

    result = part.wrap_model_call(request, call)
    into.extend(kept)
    return result


async def _amodel_layer(
    part: AgentMiddleware[Any, Any, Any],
    inner: AsyncModelLayer,
    request: ModelRequest[Any],
    into: list[dict[str, Any]],
) -> ModelResult:
    kept: list[dict[str, Any]] = []

    async def call(next_request: ModelRequest[Any]) -> ModelResponse[Any]:
        kept.clear()
        return _unwrapped(await inner(next_request, kept), kept)

    result = await part.awrap_model_call(request, call)
    into.extend(kept)
    return result


def _unwrapped(result: ModelResult, into: list[dict[str, Any]]) -> ModelResponse[Any]:
    """The response a layer's handler returns, its state update kept apart."""
    if isinstance(result, ExtendedModelResponse):
        command = result.command
        if command is not None:
            if command.goto or command.graph or command.resume is not None:
                raise NotImplementedError("a composed part may only update the state")
            if isinstance(command.update, dict):
                into.append(command.update)
        return result.model_response
    if isinstance(result, AIMessage):
        return ModelResponse(result=[result], structured_response=None)
    return result
