"""Build the chat model tether talks to: ChatOpenAI at an OpenAI-compatible server (vLLM),
or at the embedded llama.cpp server when no endpoint is configured."""

from __future__ import annotations

import sys
from importlib.metadata import entry_points

from langchain_openai import ChatOpenAI

from tether.extras import require
from tether.settings import EMBEDDED_CONTEXT, AgentSettings

_announced: set[str] = set()


def endpoint_for(settings: AgentSettings) -> tuple[str, str]:
    """(base URL, model name): the configured server, or the embedded one (the ``local``
    extra, found by its ``tether.model_servers`` entry point), started once."""
    if settings.base_url is not None:
        return settings.base_url, settings.model
    purpose = "the embedded model (used when no TETHER_BASE_URL is set)"
    require("local", purpose, "tether_local", "xllamacpp")
    start = next(iter(entry_points(group="tether.model_servers", name="embedded"))).load()
    server = start(settings.gguf_path, ctx_size=EMBEDDED_CONTEXT)
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
