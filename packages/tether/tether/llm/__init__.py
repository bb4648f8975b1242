"""Model clients: ChatOpenAI for a vLLM (or any OpenAI-compatible) server, and the embedded model.

Names load on first use, so ``import tether.llm`` starts no server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether._exports import lazy_getattr

if TYPE_CHECKING:
    from tether.llm.embedded import EmbeddedServer, default_gguf_path
    from tether.llm.model import make_chat_model
    from tether.llm.parsing import call_fingerprint

_EXPORTS = {
    "call_fingerprint": "tether.llm.parsing",
    "EmbeddedServer": "tether.llm.embedded",
    "default_gguf_path": "tether.llm.embedded",
    "make_chat_model": "tether.llm.model",
}
__all__ = [
    "EmbeddedServer",
    "call_fingerprint",
    "default_gguf_path",
    "make_chat_model",
]

__getattr__ = lazy_getattr(__name__, _EXPORTS, globals())
