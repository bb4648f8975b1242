"""What nodes need besides the state: settings, tools, model, counter, clock."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.runtime import Runtime

from tether.control.cancel import CancelStore
from tether.graph.rules import Rule
from tether.llm.model import make_chat_model
from tether.llm.server_tokens import ServerTokenCounter
from tether.memory.tokens import TiktokenCounter, TokenCounter
from tether.settings import AgentSettings, load_settings, resolve_settings
from tether.tools.registry import ToolRegistry

MODEL_FIELDS = (
    "base_url",
    "model",
    "gguf_path",
    "api_key",
    "top_p",
    "max_tokens",
    "request_timeout",
)


@dataclass
class Deps:
    """Shared by the nodes of one compiled graph."""

    settings: AgentSettings | None  # None: defaults and TETHER_* variables, read at first use
    registry: ToolRegistry
    rules: Sequence[Rule]
    counter: TokenCounter | None = None
    model: BaseChatModel | None = None
    model_factory: Callable[[AgentSettings], BaseChatModel] = make_chat_model
    sleep: Callable[[float], None] = time.sleep
    rng: random.Random = field(default_factory=random.Random)
    cancel_store: CancelStore | None = None
    _models: dict[tuple[Any, ...], BaseChatModel] = field(default_factory=dict)
    _counters: dict[str, TokenCounter] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def settings_for(self, runtime: Runtime[Any] | None) -> AgentSettings:
        """The graph's settings with this run's context overrides applied."""
        if self.settings is None:
            self.settings = load_settings()  # raises SettingsError inside the run, not at import
        return resolve_settings(self.settings, runtime.context if runtime else None)

    def model_for(self, settings: AgentSettings) -> BaseChatModel:
        """The given model, or one built (once per endpoint settings) from the settings."""
        if self.model is not None:
            return self.model
        key = tuple(str(getattr(settings, name)) for name in MODEL_FIELDS)
        with self._lock:
            if key not in self._models:
                self._models[key] = self.model_factory(settings)
            return self._models[key]

    def counter_for(self, settings: AgentSettings) -> TokenCounter:
        """The counter given to build_graph; else the server's own tokenizer (``/tokenize``)
        for any OpenAI-compatible model (built or passed in); else tiktoken."""
        if self.counter is not None:
            return self.counter
        base_url = getattr(self.model_for(settings), "openai_api_base", None)
        key = str(base_url)
        with self._lock:
            if key not in self._counters:
                offline = TiktokenCounter()
                self._counters[key] = ServerTokenCounter(base_url, offline) if base_url else offline
            return self._counters[key]
