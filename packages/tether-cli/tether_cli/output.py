"""How a command ends: exit codes, and the JSON view of a final state."""

from __future__ import annotations

import json
import sys
from typing import Any

import typer

EXIT_COMPLETED, EXIT_STOPPED, EXIT_ERROR, EXIT_WAITING = 0, 1, 2, 3


def finish(final: dict[str, Any], as_json: bool, trace: list[Any] = ()) -> None:  # type: ignore[assignment]
    """Print the JSON result if asked; exit 0 only for a completed run."""
    if as_json:
        view = result_view(final, list(trace))
        sys.stdout.write(json.dumps(view, ensure_ascii=False, indent=2) + "\n")
    raise typer.Exit(EXIT_COMPLETED if final.get("status") == "completed" else EXIT_STOPPED)


def result_view(state: dict[str, Any], trace: list[Any]) -> dict[str, Any]:
    """The parts of a final state a script wants, and the run's trace."""
    keys = ("status", "reason", "answer", "steps", "usage", "run_id", "task")
    view = {key: state.get(key) for key in keys}
    view["reasoning_buffer"] = state.get("reasoning_buffer", [])
    view["tool_buffer"] = state.get("tool_buffer", [])
    view["history"] = state.get("history", [])
    view["trace"] = trace
    return json.loads(json.dumps(view, ensure_ascii=False, default=str))
