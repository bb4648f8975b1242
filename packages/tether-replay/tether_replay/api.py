"""The Python API: conversations replayed through one of tether's faces."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from tether import AgentSettings

from tether_replay.outcome import Face, RunOutcome
from tether_replay.records import Conversation, read_conversations
from tether_replay.tools import ToolFile, ToolSpec, infer_specs


def replay_one(
    conversation: Conversation,
    specs: list[ToolSpec],
    settings: AgentSettings | None = None,
    face: Face = "loop",
) -> RunOutcome:
    """One conversation through one face (``loop`` or ``middleware``)."""
    settings = settings if settings is not None else AgentSettings()
    if face == "middleware":
        from tether_replay.middleware import replay_middleware

        return replay_middleware(conversation, specs, settings)
    from tether_replay.loop import replay_loop

    return replay_loop(conversation, specs, settings)


def replay(
    runs: Path | Iterable[Conversation],
    *,
    tools: Path | None = None,
    settings: AgentSettings | None = None,
    face: Face = "loop",
) -> Iterator[RunOutcome]:
    """Each conversation of ``runs`` (a file, or conversations already read) replayed
    through ``face``. ``tools``: a tools file (else every tool is inferred from the calls)."""
    conversations = read_conversations(runs) if isinstance(runs, Path) else runs
    tool_file = ToolFile.read(tools) if tools is not None else None
    for conversation in conversations:
        if tool_file is not None:
            specs = tool_file.specs_for(conversation)
        else:
            specs = infer_specs([conversation])
        yield replay_one(conversation, specs, settings, face)
