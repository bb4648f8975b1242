"""A small stub of vLLM's OpenAI-compatible server, written from vLLM's documented API.

It answers with the shapes tether relies on, as vLLM emits them:

* ``POST /v1/chat/completions``, non-streaming and streaming (SSE ``data:`` lines ending with
  ``data: [DONE]``). With ``stream_options.include_usage`` the last chunk before ``[DONE]``
  carries ``usage`` and an empty ``choices`` list.
* ``tool_calls`` as the hermes tool parser builds them: ``id`` ``chatcmpl-tool-<hex>``,
  ``type`` ``function``, ``function.arguments`` a JSON string (``ensure_ascii=False``),
  ``content`` null and ``finish_reason`` ``tool_calls``. Streamed, the first delta carries
  id, type and name, later deltas carry argument fragments by ``index``.
* ``POST /tokenize`` at the server root: ``{"prompt": ..., "add_special_tokens": ...}`` ->
  ``{"count", "max_model_len", "tokens", "token_strs"}``; or vLLM's chat shape,
  ``{"messages": [...], "tools": [...], "add_generation_prompt": ...}``, counted as the
  template would render it (messages, tool schemas, generation prompt).

Switches on :class:`StubConfig` make it misbehave the ways real servers do (no usage,
no ``/tokenize``). Every request body is recorded so tests can pin what the client sends.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import threading
import time
import uuid
import zlib
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

MODEL = "Qwen2.5-7B-Instruct"
MAX_MODEL_LEN = 32768
REPLY_TEXT = "The order ORD-2024-001 has shipped."
_TOKEN = re.compile(r"\w+|[^\w\s]")
_PIECE = re.compile(r"\s*(?:\w+|[^\w\s])")  # a token with the whitespace before it


def stub_tokens(text: str) -> list[int]:
    """Deterministic fake token ids: one per word or punctuation mark."""
    return [zlib.crc32(piece.encode()) % 150_000 for piece in _TOKEN.findall(text)]


@dataclass
class StubConfig:
    """How the stub behaves; tests flip these to model other servers."""

    usage: bool = True  # False: never report usage (some OpenAI-compatible servers)
    tokenize: bool = True  # False: /tokenize answers 404, as on a server without it
    tool_arguments: dict[str, Any] = field(
        default_factory=lambda: {"order_id": "ORD-2024-001", "note": "查询"}
    )
    requests: list[dict[str, Any]] = field(default_factory=list)
    tokenize_calls: int = 0
    script: list[str] = field(default_factory=list)  # text replies, in order, when non-empty
    gate: Gate | None = None
    tokenize_bodies: list[dict[str, Any]] = field(default_factory=list)
    # A reply worked out from each request (text, or a tool call's name and arguments), when
    # no script is left: for callers that cannot know in advance how many calls come.
    respond: Callable[[dict[str, Any]], tuple[str | None, dict | None]] | None = None


@dataclass
class Gate:
    """Holds the ``at``-th chat request (1-based) until ``release`` is set.

    ``arrived`` is set when it comes in. A held request whose client goes away (a killed
    process) is dropped without using a scripted reply, so the next request gets it.
    """

    at: int
    arrived: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)

    async def wait(self, request: Request) -> bool:
        """False when the client disconnected while held."""
        self.arrived.set()
        while not self.release.is_set():
            if await request.is_disconnected():
                return False
            await asyncio.sleep(0.02)
        return True


def _prompt_tokens(body: dict[str, Any]) -> int:
    text = " ".join(str(m.get("content") or "") for m in body.get("messages", []))
    return len(stub_tokens(text)) + 3 * len(body.get("messages", []))


def _chat_tokens(body: dict[str, Any]) -> int:
    """A chat as a template renders it: the messages, each tool's JSON schema (a template
    lists them in the system turn) and the generation prompt."""
    tools = json.dumps(body.get("tools") or [], ensure_ascii=False)
    prompt = 3 if body.get("add_generation_prompt", True) else 0
    return _prompt_tokens(body) + len(stub_tokens(tools)) + prompt


def _reply_pieces(body: dict[str, Any], config: StubConfig) -> tuple[str | None, dict | None]:
    """The reply: the next scripted text, ``respond``'s, or a call to the first tool offered."""
    if config.script:
        return config.script.pop(0), None
    if config.respond is not None:
        return config.respond(body)
    tools = body.get("tools") or []
    if tools and body.get("tool_choice") != "none":
        name = tools[0]["function"]["name"]
        arguments = json.dumps(config.tool_arguments, ensure_ascii=False)
        return None, {"name": name, "arguments": arguments}
    return REPLY_TEXT, None


def _usage(prompt: int, completion: int) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "total_tokens": prompt + completion,
        "completion_tokens": completion,
        "prompt_tokens_details": None,
    }


def build_app(config: StubConfig) -> Starlette:
    """The Starlette app serving the stub routes for ``config``."""

    async def models(request: Request) -> Response:
        return JSONResponse(
            {
                "object": "list",
                "data": [
                    {
                        "id": MODEL,
                        "object": "model",
                        "created": int(time.time()),
                        "owned_by": "vllm",
                        "root": f"Qwen/{MODEL}",
                        "parent": None,
                        "max_model_len": MAX_MODEL_LEN,
                    }
                ],
            }
        )

    async def health(request: Request) -> Response:
        return Response(status_code=200)

    async def tokenize(request: Request) -> Response:
        config.tokenize_calls += 1
        if not config.tokenize:
            return JSONResponse({"detail": "Not Found"}, status_code=404)
        body = await request.json()
        config.tokenize_bodies.append(body)
        if isinstance(body.get("messages"), list):  # vLLM's chat shape: the rendered template
            count = _chat_tokens(body)
            return JSONResponse(
                {"count": count, "max_model_len": MAX_MODEL_LEN, "tokens": list(range(count))}
                | {"token_strs": None}
            )
        if not isinstance(body.get("prompt"), str):
            return JSONResponse(
                {
                    "error": {
                        "message": "field 'prompt' is required",
                        "type": "BadRequestError",
                        "param": None,
                        "code": 400,
                    }
                },
                status_code=400,
            )
        tokens = stub_tokens(body["prompt"])
        return JSONResponse(
            {"count": len(tokens), "max_model_len": MAX_MODEL_LEN, "tokens": tokens}
            | {"token_strs": None}
        )

    async def chat(request: Request) -> Response:
        body = await request.json()
        config.requests.append(body)
        gate = config.gate
        if gate is not None and len(config.requests) == gate.at and not await gate.wait(request):
            return Response(status_code=499)
        completion_id = f"chatcmpl-{uuid.uuid4().hex}"
        created = int(time.time())
        text, call = _reply_pieces(body, config)
        pieces = _PIECE.findall(text) if text else _split_arguments(call)
        usage = _usage(_prompt_tokens(body), len(pieces) + 1)  # +1: the end-of-turn token
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            events = _stream_events(
                completion_id,
                created,
                text,
                call,
                pieces,
                usage if config.usage else None,
                include_usage=include_usage,
            )
            return StreamingResponse(events, media_type="text/event-stream")
        message: dict[str, Any] = {"role": "assistant", "reasoning_content": None}
        if call is not None:
            tool_call = {"id": _tool_call_id(), "type": "function", "function": call}
            message |= {"content": None, "tool_calls": [tool_call]}
        else:
            message |= {"content": text, "tool_calls": []}
        payload: dict[str, Any] = {
            "id": completion_id,
            "object": "chat.completion",
            "created": created,
            "model": MODEL,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": "tool_calls" if call else "stop",
                    "stop_reason": None,
                }
            ],
            "prompt_logprobs": None,
        }
        if config.usage:
            payload["usage"] = usage
        return JSONResponse(payload)

    return Starlette(
        routes=[
            Route("/health", health, methods=["GET"]),
            Route("/v1/models", models, methods=["GET"]),
            Route("/tokenize", tokenize, methods=["POST"]),
            Route("/v1/chat/completions", chat, methods=["POST"]),
        ]
    )


def _tool_call_id() -> str:
    return f"chatcmpl-tool-{uuid.uuid4().hex}"


def _split_arguments(call: dict[str, Any] | None) -> list[str]:
    """Argument text in small fragments, the way the hermes parser streams its diffs."""
    arguments = call["arguments"] if call else ""
    return [arguments[i : i + 7] for i in range(0, len(arguments), 7)]


async def _stream_events(
    completion_id: str,
    created: int,
    text: str | None,
    call: dict[str, Any] | None,
    pieces: list[str],
    usage: dict[str, Any] | None,
    *,
    include_usage: bool,
) -> AsyncIterator[str]:
    def chunk(choices: list[dict[str, Any]], **extra: Any) -> str:
        data = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": MODEL,
            "choices": choices,
        } | extra
        text = json.dumps(data, ensure_ascii=False)
        if not text.isascii():  # text a server cannot encode (a lone surrogate) goes escaped
            text = text if _encodes(text) else json.dumps(data)
        return f"data: {text}\n\n"

    def choice(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}

    yield chunk([choice({"role": "assistant", "content": ""})])
    if call is None:
        for piece in pieces:
            yield chunk([choice({"content": piece})])
    else:
        head = {"id": _tool_call_id(), "type": "function", "index": 0}
        yield chunk(
            [choice({"content": None, "tool_calls": [head | {"function": {"name": call["name"]}}]})]
        )
        for piece in pieces:
            fragment = {"index": 0, "function": {"arguments": piece}}
            yield chunk([choice({"content": None, "tool_calls": [fragment]})])
    finish = "tool_calls" if call else "stop"
    yield chunk([choice({"content": ""}, finish) | {"stop_reason": None}])
    if include_usage and usage is not None:
        yield chunk([], usage=usage)
    yield "data: [DONE]\n\n"


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@dataclass
class RunningStub:
    """A stub listening on 127.0.0.1."""

    config: StubConfig
    root_url: str

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"


@contextmanager
def serve_stub(config: StubConfig | None = None) -> Iterator[RunningStub]:
    """Serve the stub on a free 127.0.0.1 port in a thread; stopped on exit."""
    config = config or StubConfig()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(build_app(config), log_level="warning", lifespan="off", access_log=False)
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the stub server did not start")
        time.sleep(0.01)
    try:
        yield RunningStub(config, f"http://127.0.0.1:{port}")
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def closed_port() -> int:
    """A 127.0.0.1 port that nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
