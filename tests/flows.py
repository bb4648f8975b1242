"""The seed flow (query, price, pay, answer) as a model that reads its prompt: which step it
takes depends only on the tool results it is shown, so faults change its path and a run
resumed in another process continues where the prompt says it stands."""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import BaseMessage
from tether.testing import FunctionChatModel
from tether_world.demo import SEED_FLOW_REPLIES

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
