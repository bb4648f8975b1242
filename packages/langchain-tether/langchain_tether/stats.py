"""Per-tool statistics of a run, in the agent's output (``tether_tool_stats``), kept by
:class:`langchain_tether.TetherMiddleware` from the tool steps it records."""

from __future__ import annotations

from typing import Any

from tether import ToolStats

from langchain_tether.tooling import ToolStep


def add_call(current: dict[str, Any], call: dict[str, Any]) -> dict[str, Any]:
    """Reducer: the run's stats with one more call of ``call["tool"]``
    (:meth:`tether.ToolStats.record`; no error text is kept)."""
    stats = dict(current or {})
    kept = ToolStats(**stats.get(call["tool"], {}))
    kept.record(call["ok"], call["latency_s"], None)
    stats[call["tool"]] = dict(vars(kept))  # its fields are plain values
    return stats


def stats_update(step: ToolStep) -> dict[str, Any]:
    """The call counted, with its latency (the time its hook took). A call answered from
    its record or refused by tether is not counted (it did not run); a call whose exception
    propagates is not either (a retry or error middleware goes inside)."""
    if step.call.gate is not None:
        return {}
    call = {
        "tool": step.request.tool_call["name"],
        "ok": step.result["status"] == "success",
        "latency_s": round(step.latency, 6),
    }
    return {"tether_tool_stats": call}
