"""What the nodes of one compiled graph share besides the state: settings, tools, model,
token counter, rules, clock, and the work they do once rather than every step."""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from tether.decisions.offer import Offer
from tether.decisions.rules import Rule
from tether.llm.protocols import PROTOCOLS, OutputProtocol
from tether.memory.render import PromptFrame
from tether.memory.tokens import TiktokenCounter, TokenCounter
from tether.settings import AgentSettings, load_settings, resolve_settings
from tether.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from tether.control.cancel import CancelStore
    from tether.control.trace_log import SqlTraceLog

MODEL_FIELDS = (
    "base_url",
    "model",
    "gguf_path",
    "api_key",
    "top_p",
    "max_tokens",
    "request_timeout",
)


def _model_key(settings: AgentSettings) -> tuple[str, ...]:
    return tuple(str(getattr(settings, name)) for name in MODEL_FIELDS)


@dataclass
class Prepared:
    """One step's model setup for what it offers: built once per offer."""

    protocol: OutputProtocol
    offer: Offer
    tools: list[BaseTool]
    """The tools the model may call at this step (none when only the final answer is)."""
    frame: PromptFrame
    model: Runnable[Any, Any]
    call_kwargs: dict[str, Any]


@dataclass
class Deps:
    """Shared by the nodes of one compiled graph."""

    settings: AgentSettings | None  # None: defaults and TETHER_* variables, read at first use
    registry: ToolRegistry
    rules: Sequence[Rule]
    counter: TokenCounter | None = None
    model: BaseChatModel | None = None
    model_factory: Callable[[AgentSettings], BaseChatModel] | None = None
    sleep: Callable[[float], None] = time.sleep
    asleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    rng: random.Random = field(default_factory=random.Random)
    cancel_store: CancelStore | None = None  # a run store's cancel flags (tether.control)
    trace_log: SqlTraceLog | None = None  # a run store's trace log: each node saves its events
    _models: dict[tuple[Any, ...], BaseChatModel] = field(default_factory=dict)
    _counters: dict[str, TokenCounter] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def settings_for(self, context: Any) -> AgentSettings:
        """The graph's settings with this run's context overrides applied."""
        if self.settings is None:
            self.settings = load_settings()  # raises SettingsError inside the run, not at import
        resolved = resolve_settings(self.settings, context)
        if self.model is None:
            return resolved
        # A model passed in is not the embedded one, whatever base_url says: the profile stays
        # off. With no base_url nothing says what it supports, so the protocol is react
        # unless asked for; with one, it is a server's (json_schema).
        server: dict[str, Any] = {}
        if resolved.small_model is None:
            server["small_model"] = False
        if resolved.protocol is None and resolved.base_url is None:
            server["protocol"] = "react"
        return resolved.with_overrides(server)

    def model_for(self, settings: AgentSettings) -> BaseChatModel:
        """The given model, or one built (once per endpoint settings) from the settings."""
        if self.model is not None:
            return self.model
        key = _model_key(settings)
        with self._lock:
            if key not in self._models:
                self._models[key] = self._factory()(settings)
            return self._models[key]

    def _factory(self) -> Callable[[AgentSettings], BaseChatModel]:
        if self.model_factory is None:
            from tether.llm.model import make_chat_model  # the server-facing stack, on demand

            self.model_factory = make_chat_model
        return self.model_factory

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
                if base_url:
                    from tether.llm.server_tokens import ServerTokenCounter

                    self._counters[key] = ServerTokenCounter(base_url, offline)
                else:
                    self._counters[key] = offline
            return self._counters[key]

    def prepared(self, settings: AgentSettings, offer: Offer | None = None) -> Prepared:
        """The system prompt, its token count and the bound model for ``offer`` (default:
        every tool registered now, nothing withheld), built at each step: with 12 tools that
        took 8 ms (react) and 11 ms (json_schema), 0.45% and 0.6% of a 1.8 s model step, too
        little to keep a cache for."""
        if offer is None:
            offer = Offer(tuple(self.registry.tools()), small=settings.small_profile)
        model = self.model_for(settings)
        protocol = PROTOCOLS[settings.protocol_name]
        system = "\n\n".join(filter(None, [protocol.system_prompt(offer), settings.instructions]))
        tokens = protocol.frame_tokens(system, offer, self.counter_for(settings))
        bound, kwargs = protocol.prepare(model, offer)
        frame = PromptFrame(system, tokens)
        return Prepared(protocol, offer, list(offer.callable), frame, bound, kwargs)
