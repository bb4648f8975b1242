"""start: check the input and set up a run's counters, before anything is spent."""

from __future__ import annotations

import uuid
from typing import Any

from tether.errors import TaskError
from tether.nodes.base import Node, emit
from tether.settings import AgentSettings
from tether.state import ZERO_USAGE, AgentState


class Start(Node):
    def run(self, state: AgentState, settings: AgentSettings) -> dict[str, Any]:
        task = state.get("task")
        if not isinstance(task, str) or not task.strip():
            raise TaskError("the task is empty: pass {'task': 'what the agent should do'}")
        emit(0, "start", {"task": task.strip()})
        return {
            "task": task.strip(),
            "run_id": state.get("run_id") or uuid.uuid4().hex,
            "steps": 0,
            "success_streak": 0,
            "failure_streak": 0,
            "parse_failures": 0,
            "call_attempt": 0,
            "tool_retries": 0,
            "usage": ZERO_USAGE,  # a delta: adds nothing, but makes the field present
            "next_temperature": settings.temperature,
            "hints": [],
            "status": "running",
            "next": "think",
            "reason": "",
            "answer": None,
            "proposal": None,
            "result": None,
            "rule": None,
        }
