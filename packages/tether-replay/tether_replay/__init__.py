"""Replay recorded agent conversations through tether's controls, calling no model and no tool.

Point it at your own agent's logs and see, run by run, where tether would have stopped, sent a
note, sent an answer back, answered a call from its record, refused a call or withheld a
reply, before you adopt it. See docs/replay.md.

The names load on first use, so ``tether --help`` (which imports this package's command)
loads neither LangChain nor tether's graph.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tether_replay.api import replay, replay_one
    from tether_replay.outcome import Cause, Face, Point, RunOutcome
    from tether_replay.records import Conversation, RecordError, read_conversations
    from tether_replay.tools import ToolFile, ToolSpec, infer_specs

_EXPORTS = {
    "Cause": "outcome",
    "Conversation": "records",
    "Face": "outcome",
    "Point": "outcome",
    "RecordError": "records",
    "RunOutcome": "outcome",
    "ToolFile": "tools",
    "ToolSpec": "tools",
    "infer_specs": "tools",
    "read_conversations": "records",
    "replay": "api",
    "replay_one": "api",
}

__all__ = [
    "Cause",
    "Conversation",
    "Face",
    "Point",
    "RecordError",
    "RunOutcome",
    "ToolFile",
    "ToolSpec",
    "infer_specs",
    "read_conversations",
    "replay",
    "replay_one",
]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"tether_replay.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value
