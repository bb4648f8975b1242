"""start: check the input and set up a run's counters, before anything is spent."""

from __future__ import annotations

import uuid
from typing import Any

from langgraph.types import Overwrite
from tether.decisions.grounding import heard
from tether.decisions.policy import stale_records
from tether.errors import TaskError
from tether.memory.render import turn_text
from tether.nodes.base import Node, emit
from tether.settings import AgentSettings
from tether.state import TURNS_KEPT, ZERO_USAGE, AgentState, Turn, windowed


class Start(Node):
    """A run's counters start afresh. On a thread that ran before (a conversation's next user
    message) what its calls established stays: the grounds, and the call memory, where a
    call that failed twice is still refused and every success is stale (the user may have
    changed something since: proposed again, the call runs again, a write with approval)."""

    def run(self, state: AgentState, settings: AgentSettings) -> dict[str, Any]:
        task = state.get("task")
        if not isinstance(task, str) or not task.strip():
            raise TaskError("the task is empty: pass {'task': 'what the agent should do'}")
        emit(0, "start", {"task": task.strip()})
        turns: list[Turn] = [{"role": "user", "text": task.strip(), "tokens": 0}]
        if state.get("conversation"):  # the reply to the thread's last message comes first
            reply = state.get("answer") or f"(no answer: {state.get('reason') or 'none given'})"
            turns.insert(0, {"role": "tether", "text": reply, "tokens": 0})
        said = [{**t, "tokens": self.deps.counter_for(settings).count(turn_text(t))} for t in turns]
        return {
            "task": task.strip(),
            "run_id": state.get("run_id") or uuid.uuid4().hex,
            "steps": 0,
            "success_streak": 0,
            "failure_streak": 0,
            "parse_failures": 0,
            "call_attempt": 0,
            "tool_retries": 0,
            "tool_failures": {},
            "usage": Overwrite(ZERO_USAGE),  # a thread's next run starts a budget of its own
            "next_temperature": settings.temperature,
            "hints": [],
            "status": "running",
            "next": "think",
            "reason": "",
            "cause": None,
            "answer": None,
            "proposal": None,
            "result": None,
            "rule": None,
            "sent_back": False,
            "closing": None,
            "calls": stale_records(state.get("calls", {})),
            "grounds": heard(state.get("grounds"), task.strip()),  # type: ignore[arg-type]
            "conversation": windowed(said, TURNS_KEPT),
        }
