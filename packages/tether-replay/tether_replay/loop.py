"""A recorded run replayed through tether's loop: the real graph, a model that gives back the
logged replies and tools that give back the logged results.

Each user turn is one run of the graph on the conversation's thread (``{"task": <the user's
message>}``), as an application built on tether would run a conversation. The loop runs one
call a step, so a logged reply with several calls is given as one reply per call (each with
the logged prompt's tokens: that is what the loop's extra model calls would cost). The first
turn that tether ends with another status than ``completed`` ends the replay: after it, the
conversation would not have been the logged one.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from tether import AgentSettings, ToolRegistry, build_graph

from tether_replay import verdicts
from tether_replay.outcome import RunOutcome
from tether_replay.player import LogEnded, Player, ReplayChatModel
from tether_replay.records import Conversation
from tether_replay.tools import Cursor, ToolSpec, canonical, replay_tools

REPLAY_SETTINGS: dict[str, Any] = {
    "protocol": "native",
    "small_model": False,
    "approval_tools": [],
    "context_window": 32768,
}
"""What a replay needs of the loop whatever the user's settings: the logged replies are native
tool calls from a server model, and the log already holds what was approved."""


def replay_loop(
    conversation: Conversation, specs: Sequence[ToolSpec], settings: AgentSettings
) -> RunOutcome:
    """What tether's loop would have done with ``conversation``, turn by turn."""
    cursor = Cursor()
    player = Player(cursor, split_calls=True)
    graph = build_graph(
        settings.with_overrides({**REPLAY_SETTINGS, "instructions": conversation.system}),
        model=ReplayChatModel(player=player),
        registry=ToolRegistry(replay_tools(specs, cursor)),
        checkpointer=InMemorySaver(),
    )
    writes = verdicts.write_names(specs)
    outcome = verdicts.blank_outcome(conversation, "loop")
    config = {"configurable": {"thread_id": "replay"}, "recursion_limit": 10_000}
    for number, turn in enumerate(conversation.turns):
        player.start_turn(turn)
        given: list[int] = []
        status, reason = "running", ""
        for event in _events(graph, turn.user or "(an empty message)", config, player, given):
            status, reason = _read(event, outcome, player, given, cursor, writes) or (
                status,
                reason,
            )
        outcome.status = status if status != "running" else "completed"
        if status not in ("completed", "running"):
            later = [r for t in conversation.turns[number + 1 :] for r in t.replies]
            cut = verdicts.cut(player, later)
            if cut:
                verdicts.stop(outcome, status, reason, player, cut, turn, conversation, writes)
            break
    outcome.last_sent_back = verdicts.last_sent_back(outcome)
    return outcome


def _events(
    graph: Any, task: str, config: Any, player: Player, given: list[int]
) -> Iterator[dict[str, Any]]:
    """The run's trace events as they come; a turn whose log runs out simply ends."""
    try:
        for event in graph.stream({"task": task}, config=config, stream_mode="custom"):
            if event.get("event") == "model_call":
                given.append(player.done)
            yield event
    except LogEnded:
        return


def _read(
    event: dict[str, Any],
    outcome: RunOutcome,
    player: Player,
    given: list[int],
    cursor: Cursor,
    writes: set[str],
) -> tuple[str, str] | None:
    """Fold one trace event into the outcome; the finish event gives (status, reason)."""
    detail = event.get("detail", {})
    kind = event.get("event")
    step = int(event.get("step") or 0)
    call = given[step - 1] if 0 < step <= len(given) else player.done
    if kind == "model_call":
        gate = detail.get("gate")
        if gate == "recall":
            outcome.recalls += 1
            tool, key = detail.get("tool", ""), canonical(detail.get("arguments"))
            stale = verdicts.stale(cursor.ran, tool, key, writes)
            outcome.stale_recalls += stale
            outcome.mark(call, "recall", f"{detail.get('tool')}{' (stale)' if stale else ''}")
        elif gate == "refuse":
            outcome.refusals += 1
            outcome.mark(call, "refused", str(detail.get("tool")))
    elif kind == "decision":
        hints = detail.get("hints") or []
        outcome.notes += len(hints)
        for hint in hints:
            outcome.mark(call, "note", str(hint)[:200])
        if detail.get("step_kind") == "sent_back":
            outcome.final_sent_back = True
            outcome.mark(call, "sent_back", str(detail.get("reason", ""))[:300])
    elif kind == "finish":
        return str(detail.get("status")), str(detail.get("reason", ""))
    verdicts.withheld(outcome, player)
    return None
