"""How a command ends: exit codes, and the JSON view of a final state."""

from __future__ import annotations

import json
import sys
from typing import Any

import typer

from tether_cli.visible import visible_json

EXIT_COMPLETED, EXIT_STOPPED, EXIT_ERROR, EXIT_WAITING = 0, 1, 2, 3
"""Named here so --help need not load tether's state; each status's code is in
``tether.STATUSES`` (a test checks these agree with it)."""


def exit_code(status: Any) -> int:
    """The exit code for a run left with ``status`` (``tether.STATUSES``); a status this
    tether does not know (a damaged saved run) is an error."""
    from tether import STATUSES  # a run has loaded tether's state by now

    info = STATUSES.get(status) if isinstance(status, str) else None
    return info.exit_code if info is not None else EXIT_ERROR


def finish(
    final: dict[str, Any],
    as_json: bool,
    trace: list[Any] = (),  # type: ignore[assignment]
    saved: dict[str, Any] | None = None,
) -> None:
    """Print the JSON result if asked; exit with the status's code (0 only if completed).

    ``saved`` (a saved run's ``thread`` and ``pending`` approval request) leads the JSON: a
    script must learn which thread to answer, also when the run pauses (exit 3)."""
    if as_json:
        view = (saved or {}) | result_view(final, list(trace))
        sys.stdout.write(visible_json(json.dumps(view, ensure_ascii=False, indent=2)) + "\n")
    raise typer.Exit(exit_code(final.get("status")))


def result_view(state: dict[str, Any], trace: list[Any]) -> dict[str, Any]:
    """The parts of a final state a script wants, and the run's trace."""
    keys = ("status", "cause", "reason", "answer", "steps", "usage", "run_id", "task")
    view = {key: state.get(key) for key in keys}
    view["reasoning_buffer"] = state.get("reasoning_buffer", [])
    view["tool_buffer"] = state.get("tool_buffer", [])
    view["history"] = state.get("history", [])
    view["trace"] = trace
    return json.loads(json.dumps(view, ensure_ascii=False, default=str))
