"""ServerTokenCounter against scripted /tokenize answers (httpx MockTransport, no server)."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest
from tether.llm.server_tokens import ServerTokenCounter, tokenize_url


class FixedCounter:
    source = "tiktoken"

    def __init__(self) -> None:
        self.calls: list[str] = []

    def count(self, text: str) -> int:
        self.calls.append(text)
        return 100 + len(text)


class Recorder:
    """A MockTransport handler that records request bodies and answers with ``reply``."""

    def __init__(self, reply: Callable[[dict], httpx.Response]) -> None:
        self.reply = reply
        self.bodies: list[dict] = []
        self.urls: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        self.urls.append(str(request.url))
        return self.reply(body)


def _counter(
    recorder: Recorder, *, cache_size: int = 4096
) -> tuple[ServerTokenCounter, FixedCounter]:
    fallback = FixedCounter()
    counter = ServerTokenCounter(
        "http://127.0.0.1:9/v1",
        fallback,
        transport=httpx.MockTransport(recorder),
        cache_size=cache_size,
    )
    return counter, fallback


def llama_cpp(body: dict) -> httpx.Response:
    """llama.cpp: reads ``content`` and silently ignores ``prompt``."""
    return httpx.Response(200, json={"tokens": list(range(len(body.get("content", "").split())))})


def vllm(body: dict) -> httpx.Response:
    if "prompt" not in body:
        return httpx.Response(400, json={"error": {"message": "prompt: Field required"}})
    n = len(body["prompt"].split())
    return httpx.Response(200, json={"count": n, "max_model_len": 32768, "tokens": [7] * n})


@pytest.mark.parametrize(
    ("base_url", "expected"),
    [
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/tokenize"),
        ("http://127.0.0.1:8000/v1/", "http://127.0.0.1:8000/tokenize"),
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000/tokenize"),
        ("http://host:1/prefix/v1", "http://host:1/prefix/tokenize"),
    ],
)
def test_tokenize_lives_at_the_server_root(base_url: str, expected: str) -> None:
    assert tokenize_url(base_url) == expected


def test_vllm_shape_is_sent_first_and_its_count_used() -> None:
    recorder = Recorder(vllm)
    counter, fallback = _counter(recorder)

    assert counter.count("a b c") == 3
    assert counter.count("d e") == 2

    assert recorder.bodies == [
        {"prompt": "a b c", "add_special_tokens": False},
        {"prompt": "d e", "add_special_tokens": False},
    ]
    assert recorder.urls[0] == "http://127.0.0.1:9/tokenize"
    assert (counter.shape, counter.source, fallback.calls) == ("vllm", "server", [])


def test_llama_cpp_empty_answer_is_not_taken_for_zero_tokens() -> None:
    recorder = Recorder(llama_cpp)
    counter, fallback = _counter(recorder)

    assert counter.count("a b c d") == 4
    assert counter.count("e f") == 2

    assert recorder.bodies == [
        {"prompt": "a b c d", "add_special_tokens": False},  # ignored by llama.cpp: []
        {"content": "a b c d"},
        {"content": "e f"},  # the working shape is remembered
    ]
    assert (counter.shape, counter.source, fallback.calls) == ("llamacpp", "server", [])


def test_counts_are_cached_per_text_with_lru_eviction() -> None:
    recorder = Recorder(vllm)
    counter, _ = _counter(recorder, cache_size=2)

    for text in ["a", "b", "a", "c", "a", "b"]:
        counter.count(text)

    # "b" was evicted when "c" arrived ("a" had been used more recently), so it is asked twice
    assert [body["prompt"] for body in recorder.bodies] == ["a", "b", "c", "b"]


def test_empty_text_is_zero_without_asking() -> None:
    recorder = Recorder(vllm)
    counter, fallback = _counter(recorder)

    assert counter.count("") == 0
    assert recorder.bodies == [] and fallback.calls == []


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (lambda body: httpx.Response(404, json={"detail": "Not Found"}), "HTTP 404"),
        (lambda body: httpx.Response(500, text="boom"), "HTTP 500"),
        (lambda body: httpx.Response(200, text="<html>"), "not JSON"),
        (lambda body: httpx.Response(200, json={"tokens": []}), "no tokens"),
        (lambda body: httpx.Response(200, json=[1, 2]), "unexpected answer"),
    ],
    ids=["404", "500", "html", "always-empty", "list"],
)
def test_falls_back_for_good_and_says_why(
    reply: Callable[[dict], httpx.Response], reason: str
) -> None:
    recorder = Recorder(reply)
    counter, fallback = _counter(recorder)

    assert counter.count("a b c") == 105
    asked = len(recorder.bodies)
    assert counter.count("x y") == 103

    assert len(recorder.bodies) == asked  # no more requests once it gave up
    assert asked <= 2  # at most both request shapes, once
    assert counter.source == "tiktoken"
    assert counter.fallback_reason is not None
    assert counter.fallback_reason.startswith("http://127.0.0.1:9/tokenize: ")
    assert reason in counter.fallback_reason
    assert fallback.calls == ["a b c", "x y"]


def test_404_does_not_try_the_other_shape() -> None:
    recorder = Recorder(lambda body: httpx.Response(404, json={"detail": "Not Found"}))
    counter, _ = _counter(recorder)

    counter.count("a")

    assert len(recorder.bodies) == 1


def test_connection_error_falls_back() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    counter = ServerTokenCounter(
        "http://127.0.0.1:9/v1", FixedCounter(), transport=httpx.MockTransport(refuse)
    )

    assert counter.count("abc") == 103
    assert counter.fallback_reason is not None
    assert "unreachable" in counter.fallback_reason


def test_source_names_the_fallback() -> None:
    class Plain:
        def count(self, text: str) -> int:
            return 1

    class Named:
        source = "heuristic"

        def count(self, text: str) -> int:
            return 1

    refuse = httpx.MockTransport(lambda request: httpx.Response(404))
    plain = ServerTokenCounter("http://127.0.0.1:9/v1", Plain(), transport=refuse)
    named = ServerTokenCounter("http://127.0.0.1:9/v1", Named(), transport=refuse)
    plain.count("a")
    named.count("a")

    assert (plain.source, named.source) == ("tiktoken", "heuristic")
