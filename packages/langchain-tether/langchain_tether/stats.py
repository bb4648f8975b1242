"""Per-tool statistics of a run, in the agent's output."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware.types import (
    AgentMiddleware,
    AgentState,
    ContextT,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    OmitFromInput,
    ResponseT,
)
from langgraph.types import Command, Overwrite
from tether import ToolStats

from langchain_tether.common import starts_run
from langchain_tether.tooling import ToolHooks, ToolStep


def add_call(current: dict[str, Any], call: dict[str, Any]) -> dict[str, Any]:
    """Reducer: the run's stats with one more call of ``call["tool"]``
    (:meth:`tether.ToolStats.record`; no error text is kept)."""
    stats = dict(current or {})
    kept = ToolStats(**stats.get(call["tool"], {}))
    kept.record(call["ok"], call["latency_s"], None)
    stats[call["tool"]] = dict(vars(kept))  # its fields are plain values
    return stats


class ToolStatsState(AgentState[ResponseT]):
    tether_tool_stats: NotRequired[Annotated[dict[str, Any], OmitFromInput, add_call]]
    """Per tool: ``usage_count``, ``success_count``, ``failure_count``,
    ``consecutive_failures``, ``last_latency_s``, ``total_latency_s``."""


class ToolStatsMiddleware(
    ToolHooks, AgentMiddleware[ToolStatsState[ResponseT], ContextT, ResponseT]
):
    """Counts each tool's calls, successes and failures in the run, and times them. A call
    answered from its record or refused by tether is not counted (it did not run); a call
    whose exception propagates is not either (place a retry or error middleware inside
    this one, as in :func:`langchain_tether.tether_middleware`).

    Hooks: ``wrap_model_call`` (a new run's stats start afresh), ``wrap_tool_call``: no
    graph node of its own. State: ``tether_tool_stats`` (in the output).
    """

    state_schema = ToolStatsState  # type: ignore[assignment]

    def wrap_model_call(
        self,
        request: ModelRequest[ContextT],
        handler: Callable[[ModelRequest[ContextT]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | ExtendedModelResponse[Any]:
        return _started(request, handler(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[ContextT],
        handler: Callable[[ModelRequest[ContextT]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | ExtendedModelResponse[Any]:
        return _started(request, await handler(request))

    def tool_update(self, step: ToolStep) -> dict[str, Any] | None:
        """The call counted, with its latency (the time its hook took)."""
        if step.call.gate is not None:
            return None
        ok = step.result["status"] == "success"
        latency = round(step.latency, 6)
        return {
            "tether_tool_stats": {
                "tool": step.request.tool_call["name"],
                "ok": ok,
                "latency_s": latency,
            }
        }


def _started(
    request: ModelRequest[Any], response: ModelResponse[Any]
) -> ModelResponse[Any] | ExtendedModelResponse[Any]:
    """At a run's first model call, the stats start afresh."""
    if not starts_run(request.state):
        return response
    return ExtendedModelResponse(
        model_response=response, command=Command(update={"tether_tool_stats": Overwrite({})})
    )
