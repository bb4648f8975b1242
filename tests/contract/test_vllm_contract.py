"""Contract tests: the response shapes tether relies on, through ChatOpenAI, against a stub
written from vLLM's documented OpenAI-compatible API.

A change in langchain-openai, the openai client or the shapes vLLM documents that breaks
usage accounting, tool-call parsing or token counting shows up here.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator

import openai
import pytest
from langchain_core.exceptions import ModelConnectionError, ModelTimeoutError
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_openai import ChatOpenAI
from tether.llm.server_tokens import ServerTokenCounter

from tests.contract.vllm_stub import MODEL, REPLY_TEXT, RunningStub, closed_port, stub_tokens

PROMPT = "查询订单 ORD-2024-001 的状态"
ORDER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_order_status",
        "description": "Look up an order's status.",
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}, "note": {"type": "string"}},
            "required": ["order_id"],
        },
    },
}


class FixedCounter:
    """A fallback counter that is easy to recognise."""

    source = "tiktoken"

    def count(self, text: str) -> int:
        return 1000 + len(text)


def _llm(base_url: str, **kwargs: object) -> ChatOpenAI:
    options: dict = {"model": MODEL, "api_key": "EMPTY", "max_retries": 0, "timeout": 10}
    return ChatOpenAI(base_url=base_url, **(options | {"stream_usage": True} | kwargs))


def _aggregate(chunks: Iterator[BaseMessage]) -> AIMessageChunk:
    total: AIMessageChunk | None = None
    for chunk in chunks:
        assert isinstance(chunk, AIMessageChunk)
        total = chunk if total is None else total + chunk
    assert total is not None
    return total


def _root_cause(exc: BaseException) -> BaseException:
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return exc


def _counts(message: AIMessage) -> tuple[int, int, int]:
    usage = message.usage_metadata
    assert usage is not None
    return usage["input_tokens"], usage["output_tokens"], usage["total_tokens"]


# --- usage ------------------------------------------------------------------------------------


def test_non_streamed_reply_carries_server_usage(stub: RunningStub) -> None:
    reply = _llm(stub.base_url).invoke(PROMPT)

    assert reply.content == REPLY_TEXT
    expected_completion = len(stub_tokens(REPLY_TEXT)) + 1
    prompt = len(stub_tokens(PROMPT)) + 3
    assert _counts(reply) == (prompt, expected_completion, prompt + expected_completion)


def test_usage_survives_streaming(stub: RunningStub) -> None:
    llm = _llm(stub.base_url)
    plain = llm.invoke(PROMPT)
    streamed = _aggregate(llm.stream(PROMPT))

    sent = stub.config.requests[-1]
    assert sent["stream"] is True
    assert sent["stream_options"] == {"include_usage": True}
    assert streamed.content == plain.content
    assert _counts(streamed) == _counts(plain)


def test_without_stream_usage_the_stream_has_no_usage(stub: RunningStub) -> None:
    """Why tether sets stream_usage=True: without it no usage is asked for, none arrives."""
    streamed = _aggregate(_llm(stub.base_url, stream_usage=False).stream(PROMPT))

    assert "stream_options" not in stub.config.requests[-1]
    assert streamed.content == REPLY_TEXT
    assert streamed.usage_metadata is None


def test_server_without_usage_gives_none_not_zero(stub_without_usage: RunningStub) -> None:
    llm = _llm(stub_without_usage.base_url)

    assert llm.invoke(PROMPT).usage_metadata is None
    assert _aggregate(llm.stream(PROMPT)).usage_metadata is None


# --- tool calls -------------------------------------------------------------------------------


def test_hermes_tool_calls_parse_into_tool_calls(stub: RunningStub) -> None:
    reply = _llm(stub.base_url).bind_tools([ORDER_TOOL]).invoke(PROMPT)

    assert isinstance(reply, AIMessage)
    assert reply.content == ""
    assert reply.response_metadata["finish_reason"] == "tool_calls"
    assert len(reply.tool_calls) == 1
    call = reply.tool_calls[0]
    assert call["name"] == "get_order_status"
    assert call["args"] == {"order_id": "ORD-2024-001", "note": "查询"}
    assert call["id"] is not None and call["id"].startswith("chatcmpl-tool-")
    assert reply.invalid_tool_calls == []
    assert reply.usage_metadata is not None

    sent = stub.config.requests[-1]
    assert sent["tools"][0]["function"]["name"] == "get_order_status"


def test_streamed_hermes_tool_calls_aggregate(stub: RunningStub) -> None:
    streamed = _aggregate(_llm(stub.base_url).bind_tools([ORDER_TOOL]).stream(PROMPT))

    assert [(c["name"], c["args"]) for c in streamed.tool_calls] == [
        ("get_order_status", {"order_id": "ORD-2024-001", "note": "查询"})
    ]
    assert str(streamed.tool_calls[0]["id"]).startswith("chatcmpl-tool-")
    arguments = json.dumps(stub.config.tool_arguments, ensure_ascii=False)
    assert streamed.usage_metadata is not None
    assert streamed.usage_metadata["output_tokens"] == len(range(0, len(arguments), 7)) + 1


# --- /tokenize --------------------------------------------------------------------------------


def test_token_counter_uses_vllm_tokenize(stub: RunningStub) -> None:
    with ServerTokenCounter(stub.base_url, FixedCounter()) as counter:
        assert counter.count(PROMPT) == len(stub_tokens(PROMPT))
        assert counter.count(PROMPT) == len(stub_tokens(PROMPT))  # cached
        assert counter.count("") == 0

    assert counter.source == "server"
    assert counter.shape == "vllm"
    assert counter.fallback_reason is None
    assert stub.config.tokenize_calls == 1


def test_token_counter_falls_back_once_on_404(stub_without_tokenize: RunningStub) -> None:
    with ServerTokenCounter(stub_without_tokenize.base_url, FixedCounter()) as counter:
        first = counter.count("one two three")
        second = counter.count("four five")

    assert (first, second) == (1000 + 13, 1000 + 9)
    assert counter.source == "tiktoken"
    assert counter.fallback_reason is not None
    assert "404" in counter.fallback_reason
    assert f"{stub_without_tokenize.root_url}/tokenize" in counter.fallback_reason
    assert stub_without_tokenize.config.tokenize_calls == 1  # remembered, not retried


def test_token_counter_falls_back_fast_when_unreachable() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    started = time.monotonic()
    with ServerTokenCounter(url, FixedCounter()) as counter:
        assert counter.count("abc") == 1003
        assert counter.count("abcd") == 1004

    assert time.monotonic() - started < 3
    assert counter.source == "tiktoken"
    assert counter.fallback_reason is not None
    assert "unreachable" in counter.fallback_reason


# --- unreachable or silent endpoints ----------------------------------------------------------


@pytest.mark.parametrize("streaming", [False, True], ids=["invoke", "stream"])
def test_unreachable_endpoint_fails_fast_naming_the_url(streaming: bool) -> None:
    base_url = f"http://127.0.0.1:{closed_port()}/v1"
    llm = _llm(base_url, timeout=3)

    started = time.monotonic()
    with pytest.raises(openai.APIConnectionError) as caught:
        if streaming:
            list(llm.stream(PROMPT))
        else:
            llm.invoke(PROMPT)

    assert time.monotonic() - started < 5
    # langchain-openai re-raises as a subclass of both openai's and langchain-core's error
    assert isinstance(caught.value, ModelConnectionError)
    assert not isinstance(caught.value, openai.APITimeoutError)  # refused, not timed out
    # openai's client is built on httpx2, so the root cause is httpx2's ConnectError
    assert type(_root_cause(caught.value)).__name__ == "ConnectError"
    assert str(caught.value.request.url).startswith(base_url)


def test_endpoint_that_never_answers_times_out() -> None:
    """A server that accepts the connection and then hangs must not hang tether."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        accepted: list[socket.socket] = []
        threading.Thread(target=lambda: accepted.append(silent.accept()[0]), daemon=True).start()
        base_url = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"

        started = time.monotonic()
        with pytest.raises(openai.APITimeoutError) as caught:
            _llm(base_url, timeout=1).invoke(PROMPT)
        elapsed = time.monotonic() - started
        for conn in accepted:
            conn.close()

    assert elapsed < 4
    assert isinstance(caught.value, ModelTimeoutError)
    assert isinstance(caught.value, openai.APIConnectionError)  # one except clause covers both
    assert str(caught.value.request.url).startswith(base_url)
