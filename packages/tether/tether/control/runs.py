"""Read saved runs back: a list of runs, and one run's steps, decisions and usage."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from tether.state import add_usage


@dataclass
class RunSummary:
    thread_id: str
    task: str
    status: str
    reason: str
    steps: int
    total_tokens: int
    updated_at: str
    waiting_for: str | None  # "approval", "resume" (interrupted mid-run) or None


def list_runs(checkpointer: BaseCheckpointSaver[Any]) -> list[RunSummary]:
    """The latest checkpoint of every saved thread, newest first."""
    return _latest(checkpointer.list(None))


async def alist_runs(checkpointer: BaseCheckpointSaver[Any]) -> list[RunSummary]:
    """:func:`list_runs` through an async checkpointer."""
    return _latest([item async for item in checkpointer.alist(None)])


def _latest(items: Iterable[CheckpointTuple]) -> list[RunSummary]:
    latest: dict[str, Any] = {}
    for item in items:
        thread_id = str(item.config["configurable"]["thread_id"])
        current = latest.get(thread_id)
        if current is None or item.checkpoint["ts"] > current.checkpoint["ts"]:
            latest[thread_id] = item
    summaries = [_summary(tid, item) for tid, item in latest.items()]
    return sorted(summaries, key=lambda s: s.updated_at, reverse=True)


def _summary(thread_id: str, item: Any) -> RunSummary:
    """The run as resume would see it: a process killed after a node's writes were saved,
    before the checkpoint after it, left the run's end in those writes (as get_state reads)."""
    values = dict(item.checkpoint.get("channel_values", {}))
    for _, channel, value in item.pending_writes or []:
        if channel in ("status", "reason", "steps"):
            values[channel] = value
        elif channel == "usage":
            values["usage"] = add_usage(values.get("usage"), value)
    usage = values.get("usage") or {}
    status = values.get("status", "running")
    waiting = None
    if status == "running":
        paused = any(write[1] == "__interrupt__" for write in item.pending_writes or [])
        waiting = "approval" if paused else "resume"
    return RunSummary(
        thread_id=thread_id,
        task=values.get("task", ""),
        status=status,
        reason=values.get("reason", ""),
        steps=values.get("steps", 0),
        total_tokens=usage.get("total_tokens", 0),
        updated_at=item.checkpoint["ts"],
        waiting_for=waiting,
    )


def step_lines(trace: list[Any]) -> list[dict[str, Any]]:
    """One entry per step: what was proposed, what came back, what was decided."""
    steps: dict[int, dict[str, Any]] = {}
    for event in trace:
        entry = steps.setdefault(event["step"], {"step": event["step"]})
        detail = event["detail"]
        if event["event"] == "model_call":
            entry["tokens"] = detail["usage"]["total_tokens"]
            entry["proposal"] = detail.get("tool") or detail["kind"]
            if "arguments" in detail:
                entry["arguments"] = detail["arguments"]
        elif event["event"] == "tool_call":
            entry["result"] = detail["status"]
            entry["attempts"] = detail["attempt"]
        elif event["event"] == "approval":
            entry["approval"] = detail["action"]
        elif event["event"] == "decision":
            entry["decision"] = detail.get("decision") or "stop"
            entry["reason"] = detail.get("reason") or detail.get("stop", {}).get("reason", "")
    return [steps[k] for k in sorted(steps) if k > 0]
