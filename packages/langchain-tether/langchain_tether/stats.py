"""Per-tool statistics of a run, in the agent's output."""

from __future__ import annotations

import time
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
from tether.tools.stats import ToolStats

from langchain_tether.common import MARK, starts_run
from langchain_tether.kept import Reduced, reused, signed
from langchain_tether.layer import ToolReading, ToolSteps


@reused
def add_call(current: dict[str, Any], call: dict[str, Any]) -> dict[str, Any]:
    """Reducer: the run's stats with one more call of ``call["tool"]``
    (:meth:`tether.tools.ToolStats.record`; no error text is kept)."""
    stats = dict(current or {})
    kept = ToolStats(**stats.get(call["tool"], {}))
    kept.record(call["ok"], call["latency_s"], None)
    stats[call["tool"]] = dict(vars(kept))  # its fields are plain values
    return stats


class ToolStatsState(AgentState[ResponseT]):
    tether_tool_stats: NotRequired[
        Annotated[dict[str, Any], OmitFromInput, Reduced(dict, add_call)]
    ]
    """Per tool: ``usage_count``, ``success_count``, ``failure_count``,
    ``consecutive_failures``, ``last_latency_s``, ``total_latency_s``."""


@signed
class ToolStatsMiddleware(
    ToolSteps, AgentMiddleware[ToolStatsState[ResponseT], ContextT, ResponseT]
):
    """Counts each tool's calls, successes and failures in the run, and times them. A call
    answered from its record or refused by tether is not counted (it did not run); a call
    whose exception propagates is not either (place a retry or error middleware inside
    this one, as in :func:`langchain_tether.tether_middleware`).

    Hooks: ``wrap_model_call`` (a new run's stats start afresh), ``wrap_tool_call``: no
    graph node of its own. State: ``tether_tool_stats`` (in the output).
    """

    state_schema = ToolStatsState  # type: ignore[assignment]
    timed = True

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

    def tool_update(self, reading: ToolReading) -> dict[str, Any] | None:
        """The call counted, with its latency: the time since the layer around it began."""
        latency = time.perf_counter() - reading.started
        message = reading.message()
        if message is not None and message.additional_kwargs.get(MARK):
            return None
        ok = reading.outcome()["status"] == "success"
        call = {"tool": reading.request.tool_call["name"], "ok": ok, "latency_s": round(latency, 6)}
        return {"tether_tool_stats": call}


def _started(
    request: ModelRequest[Any], response: ModelResponse[Any]
) -> ModelResponse[Any] | ExtendedModelResponse[Any]:
    """At a run's first model call, the stats start afresh."""
    if not starts_run(request.state):
        return response
    return ExtendedModelResponse(
        model_response=response, command=Command(update={"tether_tool_stats": Overwrite({})})
    )
