"""A chat model that gives back a recorded conversation's replies, one turn at a time.

tether asks; the :class:`Player` answers with the next logged reply of the current turn and
notes where in the log the run is, so a stop can be placed on the logged model call it cut.
When tether asks for more than the turn holds (an answer it sent back), the model gives its
last answer again: the log cannot say what it would have written instead. A turn whose log
ends on a tool call has nothing more to give (:class:`LogEnded`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from pydantic import ConfigDict

from tether_replay.records import Reply, Turn
from tether_replay.tools import Cursor


class LogEnded(Exception):
    """tether asked for a reply the log does not hold (the turn ended on a tool call)."""


@dataclass
class Player:
    """Where the replay is in the log, and what tether asked of it there."""

    cursor: Cursor
    split_calls: bool = True
    """Give a reply with several calls as one reply per call (the loop runs one a step)."""
    turn: Turn | None = None
    queue: list[tuple[int, AIMessage]] = field(default_factory=list)
    done: int = 0
    """Logged replies of the conversation given so far (1-based index of the last one)."""
    before_turn: int = 0
    """Logged replies before the current turn."""
    last_text: str | None = None
    withheld: list[int] = field(default_factory=list)
    """Logged replies (1-based) that were text while tether asked for a tool call."""
    asked: int = 0
    """Model calls tether made in the current turn."""

    def start_turn(self, turn: Turn) -> None:
        self.before_turn += len(self.turn.replies) if self.turn else 0
        self.turn, self.queue, self.last_text, self.asked = turn, [], None, 0
        for offset, reply in enumerate(turn.replies, 1):
            self.queue += self._messages(self.before_turn + offset, reply)

    def left_in_turn(self) -> list[Reply]:
        """The turn's logged replies tether has not been given yet."""
        assert self.turn is not None
        seen = self.done - self.before_turn
        return list(self.turn.replies[max(seen, 0) :])

    def next_reply(self, kwargs: dict[str, Any]) -> AIMessage:
        self.asked += 1
        if not self.queue:
            if self.last_text is None:
                raise LogEnded("the turn's log ends on a tool call")
            return AIMessage(self.last_text)  # the same answer, given again
        index, message = self.queue.pop(0)
        self.done = index
        assert self.turn is not None
        logged = [
            (c["name"], c["args"], self.turn.results.get(c["id"] or "")) for c in message.tool_calls
        ]
        self.cursor.offer(
            [
                (name, args, r.text, r.error) if r else (name, args, "", True)
                for name, args, r in logged
            ]
        )
        if not message.tool_calls:
            self.last_text = message.text
            if kwargs.get("tool_choice") in ("required", "any"):
                self.withheld.append(index)
        return message

    def _messages(self, index: int, reply: Reply) -> list[tuple[int, AIMessage]]:
        usage = reply.usage
        if not reply.calls:
            return [(index, AIMessage(reply.text, usage_metadata=_usage(usage)))]
        groups = [[call] for call in reply.calls] if self.split_calls else [list(reply.calls)]
        out = []
        for number, group in enumerate(groups):
            calls = [{"name": c.name, "args": c.arguments, "id": c.id or None} for c in group]
            # The log has the usage of the reply as sent; a split call's own model call has
            # none, so tether counts the prompt it would send itself.
            share = usage if number == 0 else None
            text = reply.text if number == 0 else ""
            out.append((index, AIMessage(text, tool_calls=calls, usage_metadata=_usage(share))))
        return out


def _usage(usage: tuple[int, int] | None) -> Any:
    if usage is None:
        return None
    return {"input_tokens": usage[0], "output_tokens": usage[1], "total_tokens": sum(usage)}


class ReplayChatModel(BaseChatModel):
    """The chat model a replayed run talks to: every reply comes from the :class:`Player`."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    player: Player

    @property
    def _llm_type(self) -> str:
        return "tether-replay"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.player.next_reply(kwargs))])

    def bind_tools(
        self, tools: Sequence[dict[str, Any] | type | BaseTool | Any], **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        return self.bind(**kwargs)
