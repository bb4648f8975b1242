"""A run can be watched live: trace events as they happen, and model tokens; the run store
keeps the trace."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, get_args

import tether
from tether import AgentSettings, ToolRegistry, TraceEventName
from tether.agent import Agent
from tether.control.store import open_run_store
from tether.testing import ScriptedChatModel

from tests.scripts import act, final, lookup


class Recorder:
    def __init__(self) -> None:
        self.events: list[str] = []
        self.tokens: list[str] = []

    def event(self, event: dict[str, Any]) -> None:
        self.events.append(event["event"])

    def token(self, text: str) -> None:
        self.tokens.append(text)


def test_observer_sees_events_in_order_and_the_models_text(tmp_path: Path) -> None:
    replies = [act("lookup", '{"key": "a"}'), final("value of a")]
    with open_run_store(tmp_path / "runs.sqlite") as store:
        agent = Agent(
            AgentSettings(),
            store=store,
            registry=ToolRegistry([lookup]),
            model=ScriptedChatModel(responses=replies),
        )
        recorder = Recorder()
        result = agent.run("look up a", observer=recorder)
        kept = [e["event"] for e in agent.trace(result.thread_id)]
    assert result.status == "completed"
    assert recorder.events == [
        "start",
        "model_call",
        "tool_call",
        "decision",
        "model_call",
        "decision",
        "finish",
    ]
    assert "".join(recorder.tokens) == "".join(replies)
    assert kept == recorder.events  # the run store's log holds what was streamed
    assert set(recorder.events) <= set(get_args(TraceEventName))


def emitted_names() -> set[str]:
    """The event name of every ``emit(step, "name", detail)`` call in the core's source."""
    names = set()
    for path in Path(tether.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "emit":
                name = node.args[1]
                assert isinstance(name, ast.Constant), f"{path}: emit's name is not a literal"
                names.add(name.value)
    return names


def test_every_declared_trace_event_is_emitted_and_no_other() -> None:
    # mypy rejects a name emit() is not declared for; this catches a declared one left unused
    assert emitted_names() == set(get_args(TraceEventName))
