"""A scripted chat model, so users can test their agents the way tether tests itself."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from pydantic import ConfigDict, Field, PrivateAttr

from tether.errors import ScriptExhaustedError
from tether.memory.tokens import TiktokenCounter, count_messages
from tether.state import TraceEvent

__all__ = ["ScriptedCall", "ScriptedChatModel", "run_traced"]


def as_result(reply: str | AIMessage, messages: list[BaseMessage], *, usage: bool) -> ChatResult:
    """A reply as a chat result: with usage counted by tiktoken when it carries none (as a
    server would report it), or with no usage at all when ``usage`` is False."""
    message = reply.model_copy() if isinstance(reply, AIMessage) else AIMessage(reply)
    if not usage:
        message.usage_metadata = None
    elif message.usage_metadata is None:
        counter = TiktokenCounter()
        prompt = count_messages(counter, messages)
        output = counter.count(message.text)
        message.usage_metadata = {
            "input_tokens": prompt,
            "output_tokens": output,
            "total_tokens": prompt + output,
        }
    return ChatResult(generations=[ChatGeneration(message=message)])


class ScriptedCall(dict[str, Any]):
    """One recorded call: ``messages`` (what the model saw) and ``kwargs`` (temperature...)."""

    @property
    def messages(self) -> list[BaseMessage]:
        return self["messages"]

    @property
    def kwargs(self) -> dict[str, Any]:
        return self["kwargs"]


class _ServerLike(BaseChatModel):
    """Waits ``latency`` seconds a call as a server would, then replies with ``_reply``."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    latency: float = 0.0

    def _reply(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> ChatResult:
        raise NotImplementedError

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.latency:
            time.sleep(self.latency)
        return self._reply(messages, kwargs)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.latency:
            await asyncio.sleep(self.latency)
        return self._reply(messages, kwargs)


class ScriptedChatModel(_ServerLike):
    """Returns scripted replies in order and records every call.

    Each reply is a string or an AIMessage. Replies without ``usage_metadata`` get one,
    counted with tiktoken, so budgets behave as with a real server. Set ``usage=False`` to
    script a server that reports no usage. ``latency`` (seconds) makes every call wait, like
    a server would: ``time.sleep`` in sync runs, ``asyncio.sleep`` in async ones, so async
    runs overlap as they would against a real endpoint. Running out of replies raises
    :class:`ScriptExhaustedError`, naming how many were scripted.
    """

    responses: list[str | AIMessage] = Field(repr=False)
    usage: bool = True
    calls: list[ScriptedCall] = Field(default_factory=list, repr=False)
    _index: int = PrivateAttr(default=0)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "tether-scripted"

    @property
    def remaining(self) -> int:
        return len(self.responses) - self._index

    def _reply(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> ChatResult:
        with self._lock:
            if self._index >= len(self.responses):
                raise ScriptExhaustedError(
                    f"ScriptedChatModel ran out of replies: {len(self.responses)} scripted, "
                    f"call {self._index + 1} requested"
                )
            reply = self.responses[self._index]
            self._index += 1
            self.calls.append(ScriptedCall(messages=list(messages), kwargs=dict(kwargs)))
        return as_result(reply, messages, usage=self.usage)

    def bind_tools(
        self, tools: Sequence[dict[str, Any] | type | BaseTool | Any], **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Record the tools offered (visible in ``calls[i].kwargs['tools']``)."""
        names = [getattr(t, "name", None) or getattr(t, "__name__", str(t)) for t in tools]
        return self.bind(tools=names, **kwargs)


def run_traced(graph: Any, payload: Any, **kwargs: Any) -> tuple[dict[str, Any], list[TraceEvent]]:
    """Run ``graph`` to the end and return its final state and its trace.

    The trace is not part of the state (checkpoints stay small): it is streamed as
    ``stream_mode="custom"`` events, which this collects. ``kwargs`` go to ``graph.stream``
    (``config``, ``context``...).
    """
    final: dict[str, Any] = {}
    trace: list[TraceEvent] = []
    for mode, chunk in graph.stream(payload, stream_mode=["custom", "values"], **kwargs):
        if mode == "values":
            final = chunk
        else:
            trace.append(chunk)
    return final, trace
