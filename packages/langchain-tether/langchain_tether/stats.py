"""Per-tool statistics of a run, in the agent's output."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware import types as lc
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


class ToolStatsState(lc.AgentState[lc.ResponseT]):
    tether_tool_stats: NotRequired[Annotated[dict[str, Any], lc.OmitFromInput, add_call]]
    """Per tool: ``usage_count``, ``success_count``, ``failure_count``,
    ``consecutive_failures``, ``last_latency_s``, ``total_latency_s``."""


class ToolStatsMiddleware(
    ToolHooks, lc.AgentMiddleware[ToolStatsState[lc.ResponseT], lc.ContextT, lc.ResponseT]
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
        request: lc.ModelRequest[lc.ContextT],
        handler: Callable[[lc.ModelRequest[lc.ContextT]], lc.ModelResponse[Any]],
    ) -> lc.ModelResponse[Any] | lc.ExtendedModelResponse[Any]:
        return _started(request, handler(request))

    async def awrap_model_call(
        self,
        request: lc.ModelRequest[lc.ContextT],
        handler: Callable[[lc.ModelRequest[lc.ContextT]], Awaitable[lc.ModelResponse[Any]]],
    ) -> lc.ModelResponse[Any] | lc.ExtendedModelResponse[Any]:
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
    request: lc.ModelRequest[Any], response: lc.ModelResponse[Any]
) -> lc.ModelResponse[Any] | lc.ExtendedModelResponse[Any]:
    """At a run's first model call, the stats start afresh."""
    if not starts_run(request.state):
        return response
    return lc.ExtendedModelResponse(
        model_response=response, command=Command(update={"tether_tool_stats": Overwrite({})})
    )
