"""A recorded run replayed through tether's middleware: LangChain's ``create_agent`` with
``tether_middleware``, a model that gives back the logged replies and tools that give back the
logged results.

Each user turn is one ``invoke`` of the agent on the conversation's thread, with the user's
message, as an application would run a conversation. ``create_agent`` runs a reply's calls
in one step, so a logged reply is given whole (its parallel calls together). The first turn
tether ends with a status other than ``completed`` ends the replay, as on the loop face.

What tether did is read from what it left, not from its internals:

- its status and reason, in the agent's state (``tether_status``, ``tether_reason``);
- the ToolMessages it wrote in place of a run (marked ``recall`` or ``refuse``);
- the final-answer check's note, the one note tether keeps in the conversation (the model
  answers it), right after the text reply it sent back; every other note (the breaker's,
  the cap's) is in one model request only, and is read from the requests the model got.

A logged tool error reaches the model as an error ToolMessage, as the logged harness gave it:
a read's exception would otherwise end the invoke, since tether leaves it to a retry
middleware the application may not have.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain.agents import create_agent
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatResult
from langchain_core.tools import BaseTool
from langchain_tether import tether_middleware, tether_part
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import Field
from tether import AgentSettings

from tether_replay import verdicts
from tether_replay.loop import REPLAY_SETTINGS
from tether_replay.outcome import RunOutcome
from tether_replay.player import LogEnded, Player, ReplayChatModel
from tether_replay.records import Conversation, Turn
from tether_replay.tools import Cursor, ToolSpec, canonical, replay_tools

THREAD = "replay"
UNANSWERED = "not run: the recorded turn ended before this call was answered"
"""The result given to a call a turn left without one, before the next turn starts."""


@dataclass
class SerialCursor(Cursor):
    """The cursor, one tool at a time: ``create_agent`` runs a reply's calls in parallel
    threads, and two of them must not take the same logged result."""

    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def take(self, name: str, arguments: Any) -> tuple[str, bool]:
        with self.lock:
            return super().take(name, arguments)


class WatchedChatModel(ReplayChatModel):
    """The replay model, keeping what tether asked: each request's notes, and the logged
    reply (1-based) each returned message stands for (by the id it is given here, which
    every wrapper keeps), so a point is placed on the logged call it belongs to."""

    asked: list[tuple[int, list[HumanMessage]]] = Field(default_factory=list)
    """Per model call: the logged reply given before it, and the notes in its request."""
    given: dict[str, int] = Field(default_factory=dict)
    """Logged reply (1-based) by the id of the message that gave it."""

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        notes = [m for m in messages if isinstance(m, HumanMessage) and _is_note(m)]
        self.asked.append((self.player.done, notes))
        result = super()._generate(messages, stop, run_manager, **kwargs)
        message = result.generations[0].message
        message.id = f"replayed-{len(self.asked)}"
        self.given[message.id] = self.player.done
        return result


def replay_middleware(
    conversation: Conversation, specs: Sequence[ToolSpec], settings: AgentSettings
) -> RunOutcome:
    """What tether's middleware would have done with ``conversation``, turn by turn."""
    cursor = SerialCursor()
    player = Player(cursor, split_calls=False)
    model = WatchedChatModel(player=player)
    tools = replay_tools(specs, cursor)
    for tool in tools:
        # An error result reaches the model as a ToolMessage, as the logged harness gave it
        # (by default a tool's exception would end the invoke).
        tool.handle_tool_error = True
    agent = create_agent(
        model=model,
        tools=tools,
        system_prompt=conversation.system,
        middleware=tether_middleware(settings.with_overrides(REPLAY_SETTINGS), tools=tools),
        checkpointer=InMemorySaver(),
    )
    reader = Reader(verdicts.blank_outcome(conversation, "middleware"), model, tools, specs)
    config: Any = {"configurable": {"thread_id": THREAD}, "recursion_limit": 10_000}
    values: dict[str, Any] = {}
    for number, turn in enumerate(conversation.turns):
        player.start_turn(turn)
        held: list[BaseMessage] = values.get("messages") or []
        _invoke(agent, turn, held, config)
        values = agent.get_state(config).values
        reader.turn(values["messages"][len(held) :], player)
        if _ended(values, reader, player, conversation, number):
            break
    reader.outcome.points.sort(key=lambda point: point.call)
    reader.outcome.last_sent_back = verdicts.last_sent_back(reader.outcome)
    return reader.outcome


def _ended(
    values: dict[str, Any], reader: Reader, player: Player, conversation: Conversation, at: int
) -> bool:
    """Whether tether ended turn ``at`` with a status other than ``completed`` (the replay
    stops there); a stop that left logged work undone is marked, as on the loop face."""
    status = values.get("tether_status") or "completed"
    reader.outcome.status = status
    if status == "completed":
        return False
    later = [reply for turn in conversation.turns[at + 1 :] for reply in turn.replies]
    cut = verdicts.cut(player, later)
    if cut:
        reason = str(values.get("tether_reason") or "")
        turn = conversation.turns[at]
        verdicts.stop(
            reader.outcome, status, reason, player, cut, turn, conversation, reader.writes
        )
    return True


def _invoke(agent: Any, turn: Turn, held: list[BaseMessage], config: Any) -> None:
    """One user turn. A call the last turn left unanswered (its log ended on it, or tether's
    own replay of a write) gets an error result first: a conversation whose tool calls have
    no results is one no chat model takes. A turn whose log runs out simply ends."""
    answered = {m.tool_call_id for m in held if isinstance(m, ToolMessage)}
    last = next((m for m in reversed(held) if isinstance(m, AIMessage)), None)
    open_calls = [c for c in (last.tool_calls if last else []) if c["id"] not in answered]
    closing: list[BaseMessage] = [
        ToolMessage(UNANSWERED, tool_call_id=c["id"], name=c["name"], status="error")
        for c in open_calls
    ]
    user = HumanMessage(turn.user or "(an empty message)")
    try:
        agent.invoke({"messages": [*closing, user]}, config=config)
    except LogEnded:
        return


class Reader:
    """Reads a turn's messages into the outcome. A call is the one tether's repeat guard
    keys (its fingerprint), so a recall is matched with the runs tether matched it with;
    the runs are in the order the replies made the calls (a reply's calls run in parallel:
    a write the same reply made earlier counts as run before the recalled call)."""

    def __init__(
        self,
        outcome: RunOutcome,
        model: WatchedChatModel,
        tools: Sequence[BaseTool],
        specs: Sequence[ToolSpec],
    ) -> None:
        self.outcome, self.model = outcome, model
        self.tools = {tool.name: tool for tool in tools}
        self.writes = verdicts.write_names(specs)
        self.ran: list[verdicts.Ran] = []
        """Every tool run so far, in the order the replies made the calls."""
        self.read_asks = 0
        self.kept: set[str] = set()
        """Ids of the notes tether kept in the conversation (each counted once)."""

    def turn(self, messages: list[BaseMessage], player: Player) -> None:
        """Fold one turn's new messages (and the model calls it made) into the outcome."""
        self.kept |= {str(m.id) for m in messages if isinstance(m, HumanMessage) and _is_note(m)}
        self._asked()
        results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
        for at, message in enumerate(messages):
            if not isinstance(message, AIMessage):
                continue
            call = self.model.given.get(str(message.id), player.done)
            following = messages[at + 1] if at + 1 < len(messages) else None
            if (
                not message.tool_calls
                and isinstance(following, HumanMessage)
                and _is_note(following)
            ):
                self._sent_back(call, following)
            for tool_call in message.tool_calls:
                self._call(call, tool_call, results.get(tool_call["id"] or ""))
        verdicts.withheld(self.outcome, player)

    def _asked(self) -> None:
        """Notes added to a request only (not kept in the conversation): one per request
        that carried it. The cap's note is the stop's, not counted (nor on the loop face)."""
        for before, notes in self.model.asked[self.read_asks :]:
            for note in notes:
                if str(note.id) not in self.kept and tether_part(note) == "note":
                    self.outcome.notes += 1
                    self.outcome.mark(before, "note", note.text[:200])
        self.read_asks = len(self.model.asked)

    def _sent_back(self, call: int, note: HumanMessage) -> None:
        """A tether note kept right after a text reply: the final-answer check sent that
        reply back (it keeps its note in the conversation, since the model answers it; every
        other note lives in one request only)."""
        self.outcome.final_sent_back = True
        self.outcome.notes += 1
        self.outcome.mark(call, "note", note.text[:200])
        self.outcome.mark(call, "sent_back", note.text[:300])

    def _call(self, call: int, tool_call: Any, result: ToolMessage | None) -> None:
        """One call and its result: a run, or tether's answer in place of one."""
        if result is None:
            return  # never answered: not run
        name = tool_call["name"]
        key = canonical(dict(tool_call.get("args") or {}))
        gate = tether_part(result)
        if gate == "recall":
            stale = verdicts.stale(self.ran, name, key, self.writes)
            self.outcome.recalls += 1
            self.outcome.stale_recalls += stale
            self.outcome.notes += 1  # its ToolMessage is the recall note (a note on the loop)
            self.outcome.mark(call, "note", result.text[:200])
            self.outcome.mark(call, "recall", f"{name}{' (stale)' if stale else ''}")
        elif gate == "refuse":
            self.outcome.refusals += 1
            self.outcome.mark(call, "refused", name)
        elif gate is None:
            self.ran.append((name, key, result.status != "error"))


def _is_note(message: BaseMessage) -> bool:
    return tether_part(message) in ("note", "cap_note")
