"""start: check the input and set up a run's counters, before anything is spent."""

from __future__ import annotations

import uuid
from typing import Any

from langgraph.runtime import Runtime

from tether.errors import TaskError
from tether.graph.state import AgentState
from tether.nodes.deps import Deps


def make_start(deps: Deps) -> Any:
    def start(state: AgentState, runtime: Runtime[Any]) -> dict[str, Any]:
        settings = deps.settings_for(runtime)  # raises SettingsError on bad overrides
        task = state.get("task")
        if not isinstance(task, str) or not task.strip():
            raise TaskError("the task is empty: pass {'task': 'what the agent should do'}")
        return {
            "task": task.strip(),
            "run_id": state.get("run_id") or uuid.uuid4().hex,
            "steps": 0,
            "success_streak": 0,
            "failure_streak": 0,
            "parse_failures": 0,
            "tool_attempts": 0,
            "tool_retries": 0,
            "usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0},  # a delta
            "temperature": settings.temperature,
            "hints": [],
            "status": "running",
            "reason": "",
            "answer": None,
            "verdict": None,
            "proposal": None,
            "result": None,
            "trace": [{"step": 0, "event": "start", "detail": {"task": task.strip()}}],
        }

    return start
