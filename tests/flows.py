"""The seed flow (query, price, pay, answer) as a model that reads its prompt: which step it
takes depends only on the tool results it is shown, so faults change its path and a run
resumed in another process continues where the prompt says it stands."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult
from pydantic import Field
from tether.testing import _ServerLike, as_result
from tether_world.demo import SEED_FLOW_REPLIES


class FunctionChatModel(_ServerLike):
    """A model whose reply is a function of the prompt: ``fn(messages) -> str | AIMessage``.

    Unlike :class:`tether.testing.ScriptedChatModel` it keeps no position, so a run resumed
    in another process (or a flow whose length depends on faults) gets the reply its prompt
    calls for. Replies without usage get one counted with tiktoken; ``latency`` waits like a
    server.
    """

    fn: Callable[[list[BaseMessage]], str | AIMessage] = Field(repr=False)

    @property
    def _llm_type(self) -> str:
        return "tether-function"

    def _reply(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> ChatResult:
        return as_result(self.fn(list(messages)), messages, usage=True)


QUERY, DISCOUNT, PAY = SEED_FLOW_REPLIES[:3]
PAID = "Thought: the payment went through\nFinal Answer: paid 2328.02 for ORD-2024-001"
NOT_PAID = "Thought: the payment API keeps failing\nFinal Answer: not paid: the payment failed"
PAY_RESULT = re.compile(r"\] pay_order\(.*?\) ->\n(\{.*\})")
MAX_PAY_TRIES = 3


def next_reply(messages: list[BaseMessage]) -> str:
    prompt = messages[-1].text
    payments = PAY_RESULT.findall(prompt)
    if any('"status": "success"' in p for p in payments):
        return PAID
    if payments:
        return PAY if len(payments) < MAX_PAY_TRIES else NOT_PAID
    if "] compute_discount(" in prompt:
        return PAY
    if "] query_order(" in prompt:
        return DISCOUNT
    return QUERY


def flow_model(**kwargs: Any) -> FunctionChatModel:
    return FunctionChatModel(fn=next_reply, **kwargs)
