"""Build the chat model tether talks to: ChatOpenAI at an OpenAI-compatible server (vLLM),
or at the embedded llama.cpp server when no endpoint is configured."""

from __future__ import annotations

import sys

from langchain_openai import ChatOpenAI

from tether.llm.embedded import ensure_embedded_server
from tether.settings import EMBEDDED_CONTEXT, AgentSettings

_announced: set[str] = set()


def endpoint_for(settings: AgentSettings) -> tuple[str, str]:
    """(base URL, model name): the configured server, or the embedded one, started once."""
    if settings.base_url is not None:
        return settings.base_url, settings.model
    server = ensure_embedded_server(settings.gguf_path, ctx_size=EMBEDDED_CONTEXT)
    if server.base_url not in _announced:
        _announced.add(server.base_url)
        print(f"tether: {server.describe()}", file=sys.stderr)
    return server.base_url, server.model_name or settings.model


def make_chat_model(settings: AgentSettings) -> ChatOpenAI:
    """ChatOpenAI with the settings' sampling parameters.

    ``stream_usage=True`` asks the server for usage on the final streamed chunk
    (``stream_options.include_usage``), so token counts survive streaming: the design note
    gave up streaming to keep its budget working; tether does not have to.
    """
    base_url, model = endpoint_for(settings)
    return ChatOpenAI(
        base_url=base_url,
        model=model,
        api_key=settings.api_key,
        temperature=settings.temperature,
        top_p=settings.top_p,
        max_completion_tokens=settings.max_tokens,
        timeout=settings.request_timeout,
        max_retries=1,
        stream_usage=True,
    )
