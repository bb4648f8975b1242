"""Model clients: ChatOpenAI for a vLLM (or any OpenAI-compatible) server, or for the
embedded model (the ``local`` extra, package ``tether-local``).

Names load on first use, so ``import tether.llm`` starts no server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether._exports import lazy_getattr

if TYPE_CHECKING:
    from tether.llm.model import make_chat_model
    from tether.llm.parsing import call_fingerprint
    from tether.llm.protocols import NativeProtocol

__all__ = ["NativeProtocol", "call_fingerprint", "make_chat_model"]

__getattr__ = lazy_getattr(__name__, globals())
