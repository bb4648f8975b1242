"""Build the chat model tether talks to: ChatOpenAI at an OpenAI-compatible server (vLLM)."""

from __future__ import annotations

from langchain_openai import ChatOpenAI

from tether.settings import AgentSettings

DEFAULT_VLLM_URL = "http://localhost:8000/v1"


def make_chat_model(settings: AgentSettings, *, base_url: str | None = None) -> ChatOpenAI:
    """ChatOpenAI with the settings' sampling parameters.

    ``stream_usage=True`` asks the server for usage on the final streamed chunk
    (``stream_options.include_usage``), so token counts survive streaming: the design note
    gave up streaming to keep its budget working; tether does not have to.
    """
    return ChatOpenAI(
        base_url=base_url or settings.base_url or DEFAULT_VLLM_URL,
        model=settings.model,
        api_key=settings.api_key,
        temperature=settings.temperature,
        top_p=settings.top_p,
        max_completion_tokens=settings.max_tokens,
        timeout=settings.request_timeout,
        max_retries=1,
        stream_usage=True,
    )
