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

from tether_replay.outcome import RunOutcome, cause_of
from tether_replay.player import LogEnded, Player, ReplayChatModel
from tether_replay.records import Conversation, Reply
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
        settings.with_overrides(REPLAY_SETTINGS),
        model=ReplayChatModel(player=player),
        registry=ToolRegistry(replay_tools(specs, cursor)),
        checkpointer=InMemorySaver(),
    )
    writes = {spec.name for spec in specs if spec.side_effects}
    outcome = RunOutcome(
        uid=conversation.uid,
        cohort=conversation.cohort,
        reward=conversation.reward,
        face="loop",
        calls=conversation.calls,
        turns=len(conversation.turns),
    )
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
            cut = _cut(player, later)
            if cut:
                _stop(outcome, status, reason, player, cut, turn, conversation, writes)
            break
    last = conversation.calls
    outcome.last_sent_back = any(p.what == "sent_back" and p.call == last for p in outcome.points)
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
            stale = _stale(cursor, detail.get("tool", ""), detail.get("arguments"), writes)
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
    for index in player.withheld:
        outcome.withheld_replies += 1
        outcome.mark(index, "withheld", "a text reply while tether asked for a tool call")
    player.withheld.clear()
    return None


def _stale(cursor: Cursor, tool: str, arguments: Any, writes: set[str]) -> bool:
    """A write succeeded after the last successful run of this call."""
    key = canonical(arguments)
    ran = cursor.ran
    last = max((i for i, (n, k, ok) in enumerate(ran) if n == tool and k == key and ok), default=-1)
    return last >= 0 and any(ok and n in writes for n, _, ok in ran[last + 1 :])


def _cut(player: Player, later: list[Reply]) -> list[Reply]:
    """The logged replies a stop leaves out: the rest of the turn and every later turn."""
    return [*player.left_in_turn(), *later]


def _stop(
    outcome: RunOutcome,
    status: str,
    reason: str,
    player: Player,
    cut: list[Reply],
    turn: Any,
    conversation: Conversation,
    writes: set[str],
) -> None:
    outcome.stopped = True
    outcome.stop_call = conversation.calls - len(cut) + 1
    outcome.cause = cause_of(reason)
    outcome.reason = reason
    results = {key: value for t in conversation.turns for key, value in t.results.items()}
    cut_calls = [call for reply in cut for call in reply.calls]
    worked = [c for c in cut_calls if (r := results.get(c.id)) is not None and not r.error]
    outcome.cuts_work = bool(worked)
    outcome.cuts_write = any(c.name in writes for c in worked)
    outcome.mark(outcome.stop_call, "stop", f"{status}: {reason}"[:300])
