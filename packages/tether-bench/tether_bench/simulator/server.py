"""The simulator over HTTP: an OpenAI-compatible chat completions endpoint on 127.0.0.1.

Every agent reaches it through ChatOpenAI exactly as it would reach vLLM, so tokens and
latency are counted the same way for all. Non-streaming and streaming (SSE ``data:`` lines,
``data: [DONE]`` last) are both served; with ``stream_options.include_usage`` the last chunk
before ``[DONE]`` carries the usage and no choices, as vLLM sends it. ``POST /tokenize`` (at
the root, as on vLLM and llama.cpp) counts with the same tokenizer as the usage.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import uuid
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tether_bench.simulator.core import Simulator, UnknownSession
from tether_bench.simulator.render import Reply, completion_tokens, prompt_tokens, token_ids

HOST = "127.0.0.1"
SERVED_MODEL = "sim"
STREAM_PIECES = 4
MAX_MODEL_LEN = 32768


def _error(status: int, message: str, kind: str = "invalid_request_error") -> JSONResponse:
    return JSONResponse(
        {"error": {"message": message, "type": kind, "param": None, "code": status}},
        status_code=status,
    )


def create_app(simulator: Simulator) -> Starlette:
    """The Starlette app serving ``simulator`` (kept in ``app.state`` for the handlers)."""
    app = Starlette(
        routes=[
            Route("/health", _health, methods=["GET"]),
            Route("/tokenize", _tokenize, methods=["POST"]),
            Route("/v1/models", _models, methods=["GET"]),
            Route("/v1/chat/completions", _chat, methods=["POST"]),
        ]
    )
    app.state.simulator = simulator
    return app


async def _models(request: Request) -> Response:
    return JSONResponse(
        {
            "object": "list",
            "data": [{"id": SERVED_MODEL, "object": "model", "owned_by": "tether-bench"}],
        }
    )


async def _health(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


NOT_JSON = object()  # the body of a request that is not JSON (``null`` is JSON)


async def _json_body(request: Request) -> Any:
    """The request's JSON, or NOT_JSON when the body is not JSON (a client's mistake, a 400)."""
    try:
        return await request.json()
    except ValueError:
        return NOT_JSON


async def _tokenize(request: Request) -> Response:
    """vLLM's shape (``prompt`` -> ``count``, ``tokens``) and llama.cpp's (``content``)."""
    body = await _json_body(request)
    if body is NOT_JSON:
        return _error(400, "the request body is not JSON")
    text = body.get("prompt") if isinstance(body, dict) else None
    if not isinstance(text, str):
        text = body.get("content") if isinstance(body, dict) else None
    if not isinstance(text, str):
        return _error(400, "field 'prompt' is required")
    tokens = token_ids(text)
    return JSONResponse({"count": len(tokens), "max_model_len": MAX_MODEL_LEN, "tokens": tokens})


async def _chat(request: Request) -> Response:
    """One chat completion: the simulator's reply, streamed or whole, after its latency."""
    body = await _json_body(request)
    if body is NOT_JSON:
        return _error(400, "the request body is not JSON")
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return _error(400, "'messages' is required")
    simulator: Simulator = request.app.state.simulator
    name = str(body.get("model", ""))
    try:
        reply = simulator.reply(name, body)
    except UnknownSession as exc:
        return _error(404, str(exc), "not_found_error")
    usage = _usage(prompt_tokens(body), completion_tokens(reply))
    delay = simulator.latency.seconds(usage["prompt_tokens"], usage["completion_tokens"])
    completion_id = f"chatcmpl-{uuid.uuid4().hex}"
    if body.get("stream"):
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        events = _stream(completion_id, name, reply, usage if include_usage else None, delay)
        return StreamingResponse(events, media_type="text/event-stream")
    if delay:
        await asyncio.sleep(delay)
    return JSONResponse(_completion(completion_id, name, reply, usage))


def _usage(prompt: int, completion: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _completion(
    completion_id: str, name: str, reply: Reply, usage: dict[str, int]
) -> dict[str, Any]:
    """A whole (non-streamed) chat completion in OpenAI's shape."""
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": name,
        "choices": [
            {
                "index": 0,
                "message": reply.message(),
                "logprobs": None,
                "finish_reason": reply.finish_reason,
            }
        ],
        "usage": usage,
    }


async def _stream(
    completion_id: str, name: str, reply: Reply, usage: dict[str, int] | None, delay: float
) -> AsyncIterator[str]:
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        payload = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": name,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"

    first_wait, piece_wait = delay / 2, delay / (2 * STREAM_PIECES)
    if first_wait:
        await asyncio.sleep(first_wait)
    yield chunk({"role": "assistant", "content": ""})
    if reply.tool_call is not None and reply.content:
        yield chunk({"content": reply.content})
    if reply.tool_call is not None:
        call, fn = reply.tool_call, reply.tool_call["function"]
        yield chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": fn["name"], "arguments": ""},
                    }
                ]
            }
        )
        for piece in _pieces(fn["arguments"]):
            if piece_wait:
                await asyncio.sleep(piece_wait)
            yield chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
    else:
        for piece in _pieces(reply.content or ""):
            if piece_wait:
                await asyncio.sleep(piece_wait)
            yield chunk({"content": piece})
    yield chunk({}, reply.finish_reason)
    if usage is not None:
        payload = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": name,
            "choices": [],
            "usage": usage,
        }
        yield f"data: {json.dumps(payload)}\n\n"
    yield "data: [DONE]\n\n"


def _pieces(text: str) -> list[str]:
    if not text:
        return []
    size = max(1, -(-len(text) // STREAM_PIECES))
    return [text[i : i + size] for i in range(0, len(text), size)]


class SimulatorServer:
    """Serves a :class:`Simulator` on 127.0.0.1 (a free port) in a background thread."""

    def __init__(
        self, simulator: Simulator, *, startup_timeout: float = 10.0, port: int = 0
    ) -> None:
        """``port`` 0: the OS picks a free one."""
        self.simulator = simulator
        self.port = port
        self.startup_timeout = startup_timeout
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._port: int | None = None

    @property
    def base_url(self) -> str:
        if self._port is None:
            raise RuntimeError("the simulator server is not running; call start()")
        return f"http://{HOST}:{self._port}/v1"

    def start(self) -> str:
        """Start serving and return the OpenAI base URL (http://127.0.0.1:<port>/v1)."""
        if self._server is not None:
            return self.base_url
        config = uvicorn.Config(
            create_app(self.simulator),
            host=HOST,
            port=self.port,
            log_level="warning",
            lifespan="off",
            access_log=False,
            timeout_graceful_shutdown=2,
            backlog=512,
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, name="tether-bench-sim", daemon=True)
        thread.start()
        deadline = time.monotonic() + self.startup_timeout
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                server.should_exit = True
                thread.join(timeout=5)
                raise RuntimeError("the simulator server did not start on 127.0.0.1")
            time.sleep(0.01)
        self._port = server.servers[0].sockets[0].getsockname()[1]
        self._server, self._thread = server, thread
        return self.base_url

    def stop(self) -> None:
        """Stop serving and free the port; safe to call twice."""
        server, thread = self._server, self._thread
        self._server = self._thread = None
        self._port = None
        if server is not None:
            server.should_exit = True
        if thread is not None:
            thread.join(timeout=10)

    def __enter__(self) -> SimulatorServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
