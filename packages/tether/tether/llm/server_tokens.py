"""Exact token counts from the serving model's own tokenizer, with an offline fallback.

The pre-call budget check and the memory budget need counts before a request is sent.
tiktoken's cl100k_base only approximates Qwen's or SmolLM2's tokenizer, while both vLLM and
llama.cpp expose ``POST /tokenize`` at the server root (not under ``/v1``) with different
request shapes:

* vLLM: ``{"prompt": text, "add_special_tokens": false}`` -> ``{"count": n, "tokens": [...],
  "max_model_len": m}``.
* llama.cpp: ``{"content": text}`` -> ``{"tokens": [...]}``. It ignores ``prompt`` and answers
  ``{"tokens": []}``, which must not be mistaken for zero tokens.

vLLM also counts a whole chat as its template renders it, tools included:
``{"messages": [...], "tools": [...]}`` -> ``{"count": n, ...}``; :meth:`ServerTokenCounter.
count_chat` asks for that (a native tool-calling prompt carries the tool schemas, which the
message text alone does not show). llama.cpp has no such request: it answers None there.

The first successful shape is remembered. When the server cannot tokenize (404, a connection
error, an answer of the wrong shape) the counter says why, switches to the fallback for good
and stops asking, so a missing endpoint costs one request, not one per count.
"""

from __future__ import annotations

import functools
import json
import threading
from typing import Any, Literal, Protocol

import httpx

Shape = Literal["vllm", "llamacpp"]
SERVER_SOURCE = "server"
CHATS_KEPT = 64


class SupportsCount(Protocol):
    """Anything that can count the tokens of a text (tiktoken, for one)."""

    def count(self, text: str) -> int: ...


class _CannotTokenize(Exception):
    """This request did not give a usable count; ``other_shape`` says if the other might."""

    def __init__(self, reason: str, *, other_shape: bool = True) -> None:
        super().__init__(reason)
        self.other_shape = other_shape


def tokenize_url(base_url: str) -> str:
    """``/tokenize`` at the server root for an OpenAI-style base URL (``.../v1`` or not)."""
    root = base_url.rstrip("/")
    if root.endswith("/v1"):
        root = root[: -len("/v1")]
    return f"{root}/tokenize"


class ServerTokenCounter:
    """Counts tokens with the server's ``/tokenize``, cached per text; falls back once, for good.

    ``source`` is ``"server"`` while the server answers and the fallback's ``source``
    (``"tiktoken"``) after it could not; ``fallback_reason`` then says why, for the trace.
    """

    def __init__(
        self,
        base_url: str,
        fallback: SupportsCount,
        *,
        timeout: float = 3.0,
        cache_size: int = 4096,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.url = tokenize_url(base_url)
        self.fallback = fallback
        self.source: str = SERVER_SOURCE
        self.fallback_reason: str | None = None
        self.shape: Shape | None = None
        self._counted = functools.lru_cache(maxsize=cache_size)(self._server_count)
        self._chats: dict[str, int | None] = {}  # one entry per offered tool set
        self._lock = threading.Lock()
        self._client = httpx.Client(
            timeout=httpx.Timeout(timeout, connect=min(timeout, 1.0)), transport=transport
        )

    def count(self, text: str) -> int:
        """Tokens in ``text`` as the serving model counts them (or the fallback's estimate)."""
        if not text:
            return 0
        return self._counted(text) if self.source == SERVER_SOURCE else self.fallback.count(text)

    def _server_count(self, text: str) -> int:
        """The server's count (kept per text, least recently used dropped first)."""
        try:
            return self._ask(text)
        except _CannotTokenize as exc:
            self._give_up(str(exc))
            return self.fallback.count(text)

    def count_chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int | None:
        """Tokens of ``messages`` with ``tools`` as the server's chat template renders them
        (generation prompt included), or None when this server cannot say. Cached."""
        key = json.dumps({"messages": messages, "tools": tools}, sort_keys=True)
        with self._lock:
            if key in self._chats:
                return self._chats[key]
            if self.source != SERVER_SOURCE or self.shape == "llamacpp":
                return None
        body = {"messages": messages, "tools": tools, "add_generation_prompt": True}
        try:
            counted: int | None = self._request(body, "chat")
        except _CannotTokenize:
            counted = None  # the plain-text counts still work; only this request failed
        with self._lock:
            if len(self._chats) >= CHATS_KEPT:
                self._chats.clear()
            self._chats[key] = counted
        return counted

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    def __enter__(self) -> ServerTokenCounter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- internals ------------------------------------------------------------------------

    def _give_up(self, reason: str) -> None:
        with self._lock:
            if self.source == SERVER_SOURCE:
                self.source = str(getattr(self.fallback, "source", "tiktoken"))
                self.fallback_reason = f"{self.url}: {reason}"

    def _ask(self, text: str) -> int:
        if self.shape is not None:
            return self._post(self.shape, text)
        try:
            counted = self._post("vllm", text)
            self.shape = "vllm"
        except _CannotTokenize as vllm_error:
            if not vllm_error.other_shape:
                raise
            counted = self._post("llamacpp", text)
            self.shape = "llamacpp"
        return counted

    def _post(self, shape: Shape, text: str) -> int:
        body: dict[str, Any] = (
            {"prompt": text, "add_special_tokens": False} if shape == "vllm" else {"content": text}
        )
        return self._request(body, shape)

    def _request(self, body: dict[str, Any], shape: str) -> int:
        try:
            response = self._client.post(self.url, json=body)
        except httpx.TransportError as exc:
            reason = f"unreachable ({type(exc).__name__}: {exc})"
            raise _CannotTokenize(reason, other_shape=False) from exc
        if response.status_code != 200:
            # 404/405: no such endpoint, so another request shape cannot help either.
            raise _CannotTokenize(
                f"HTTP {response.status_code}: {response.text[:200]}",
                other_shape=response.status_code not in (404, 405),
            )
        try:
            data = response.json()
        except ValueError as exc:
            raise _CannotTokenize(f"not JSON: {response.text[:200]}") from exc
        if not isinstance(data, dict):
            raise _CannotTokenize(f"unexpected answer: {str(data)[:200]}")
        count = data.get("count")
        tokens = data.get("tokens")
        if isinstance(count, int) and not isinstance(count, bool) and count > 0:
            return count
        if isinstance(tokens, list) and tokens:
            return len(tokens)
        # Zero tokens for a non-empty text means the server ignored this request shape.
        raise _CannotTokenize(f"no tokens for a non-empty text with the {shape} request shape")
