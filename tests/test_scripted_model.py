"""ScriptedChatModel: deterministic replies, recorded calls, loud exhaustion."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage
from tether import ScriptExhaustedError
from tether.testing import ScriptedChatModel


def test_replies_in_order_with_usage_and_recorded_kwargs() -> None:
    model = ScriptedChatModel(responses=["one", AIMessage("two")])
    first = model.invoke("hello there", temperature=0.1)
    second = model.invoke("again")
    assert [first.text, second.text] == ["one", "two"]
    usage = first.usage_metadata
    assert usage and usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"] > 0
    assert model.calls[0].kwargs == {"temperature": 0.1}
    assert model.calls[1].messages[0].text == "again"


def test_given_usage_is_kept() -> None:
    usage = {"input_tokens": 7, "output_tokens": 3, "total_tokens": 10}
    model = ScriptedChatModel(responses=[AIMessage("x", usage_metadata=usage)])
    assert model.invoke("q").usage_metadata == usage


def test_running_out_is_a_clear_error() -> None:
    model = ScriptedChatModel(responses=["only"])
    model.invoke("a")
    with pytest.raises(ScriptExhaustedError, match="1 scripted, call 2 requested"):
        model.invoke("b")
