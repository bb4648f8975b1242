"""Several tether middleware as one LangChain middleware.

``create_agent`` wraps each middleware's ``wrap_model_call`` and ``wrap_tool_call`` in a
tracing span of its own, on every call: six middleware cost six spans per model call and
five per tool call, more CPU than the controls themselves. :class:`TetherMiddleware` runs
its parts' hooks nested in list order (the first part is the outermost), exactly as
``create_agent`` would, inside one span: each part's own code, under one layer. The parts'
own private fields are kept in one state channel (:mod:`tether.middleware.packed`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar, cast, get_type_hints

from langchain.agents.middleware.types import (
    AgentMiddleware,
    ContextT,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    ResponseT,
)
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from tether.middleware.common import signed
from tether.middleware.packed import Packing

ToolResponse = ToolMessage | Command[Any]
ToolHandler = Callable[[ToolCallRequest], ToolResponse]
AsyncToolHandler = Callable[[ToolCallRequest], Awaitable[ToolResponse]]
ModelHandler = Callable[[ModelRequest[Any]], ModelResponse[Any]]
AsyncModelHandler = Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]
ModelResult = ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]
RequestT = TypeVar("RequestT", ModelRequest[Any], ToolCallRequest)
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
    union of the parts', their own private fields packed in one channel. A part's state
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
        hints = merged_hints(parts)
        self.packing = Packing(hints)
        self.state_schema = self.packing.schema("TetherMiddlewareState", hints)
        self._model = [p for p in parts if _overrides(p, "wrap_model_call")]
        self._amodel = [p for p in parts if _overrides(p, "awrap_model_call")]
        self._tool = [p for p in parts if _overrides(p, "wrap_tool_call")]
        self._atool = [p for p in parts if _overrides(p, "awrap_tool_call")]

    # --- model calls ----------------------------------------------------------------------

    def wrap_model_call(
        self, request: ModelRequest[ContextT], handler: ModelHandler
    ) -> ModelResponse[Any] | ExtendedModelResponse[Any]:
        request = self._viewed(request)
        updates: list[dict[str, Any]] = []

        def layer(at: int, req: ModelRequest[Any], into: list[dict[str, Any]]) -> ModelResult:
            if at == len(self._model):
                return handler(req)
            inner: list[dict[str, Any]] = []

            def call(next_req: ModelRequest[Any]) -> ModelResponse[Any]:
                inner.clear()  # a part that calls again keeps the last call's updates
                return _unwrapped(layer(at + 1, next_req, inner), inner)

            result = self._model[at].wrap_model_call(req, call)
            into.extend(inner)
            return result

        return self._composed(_unwrapped(layer(0, request, updates), updates), updates)

    async def awrap_model_call(
        self, request: ModelRequest[ContextT], handler: AsyncModelHandler
    ) -> ModelResponse[Any] | ExtendedModelResponse[Any]:
        request = self._viewed(request)
        updates: list[dict[str, Any]] = []

        async def layer(at: int, req: ModelRequest[Any], into: list[dict[str, Any]]) -> ModelResult:
            if at == len(self._amodel):
                return await handler(req)
            inner: list[dict[str, Any]] = []

            async def call(next_req: ModelRequest[Any]) -> ModelResponse[Any]:
                inner.clear()
                return _unwrapped(await layer(at + 1, next_req, inner), inner)

            result = await self._amodel[at].awrap_model_call(req, call)
            into.extend(inner)
            return result

        return self._composed(_unwrapped(await layer(0, request, updates), updates), updates)

    # --- tool calls -----------------------------------------------------------------------

    def wrap_tool_call(self, request: ToolCallRequest, handler: ToolHandler) -> ToolResponse:
        def layer(at: int, req: ToolCallRequest) -> ToolResponse:
            if at == len(self._tool):
                return handler(req)
            return self._tool[at].wrap_tool_call(req, lambda r: layer(at + 1, r))

        return cast(ToolResponse, self.packing.command(layer(0, self._viewed(request))))

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: AsyncToolHandler
    ) -> ToolResponse:
        async def layer(at: int, req: ToolCallRequest) -> ToolResponse:
            if at == len(self._atool):
                return await handler(req)

            async def call(r: ToolCallRequest) -> ToolResponse:
                return await layer(at + 1, r)

            return await self._atool[at].awrap_tool_call(req, call)

        return cast(ToolResponse, self.packing.command(await layer(0, self._viewed(request))))

    # --- the packed fields ----------------------------------------------------------------

    def _viewed(self, request: RequestT) -> RequestT:
        """The request with the state as the parts read it (the packed fields unpacked). A
        tool still gets the state as it is, through ``runtime``."""
        state = self.packing.view(request.state)
        return request if state is request.state else dataclasses.replace(request, state=state)

    def _composed(
        self, response: ModelResponse[Any], updates: list[dict[str, Any]]
    ) -> ModelResponse[Any] | ExtendedModelResponse[Any]:
        """The parts' updates as one, inner first, as ``create_agent`` applies them in turn,
        the packed fields under one key."""
        if not updates:
            return response
        merged: dict[str, Any] = {}
        for update in updates:
            merged |= update
        command: Command[Any] = Command(update=self.packing.update(merged))
        return ExtendedModelResponse(model_response=response, command=command)


def merged_hints(parts: Sequence[AgentMiddleware[Any, Any, Any]]) -> dict[str, Any]:
    """Every part's state fields, with their annotations."""
    hints: dict[str, Any] = {}
    for part in parts:
        hints |= get_type_hints(part.state_schema, include_extras=True)
    return hints


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
