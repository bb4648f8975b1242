"""What every benchmarked agent shares: one chat-model recipe and one way of being measured.

An agent only implements :meth:`BenchAgent.execute`: given the task, the tools (a recording
registry over the world's) and a ChatOpenAI, run to the end and say how it ended. Building the
model, instrumenting it and the tools, and turning escaped exceptions into an ``error``
termination happen here, identically for every agent.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import httpx
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from tether_bench.harness import BudgetExceeded, Harness, TokenBudgetGuard, VariantSettings
from tether_bench.instrument import RecordingRegistry, RunRecorder, ToolListener
from tether_bench.operator import OPERATOR, unintended_executed, write_tools
from tether_bench.records import Outcome, RunRecord
from tether_bench.scenarios import Scenario
from tether_bench.toolset import BenchWorld

Sleep = Callable[[float], None]


@dataclass(frozen=True)
class ChatSettings:
    """The chat model every agent gets for one run: same endpoint, model and sampling."""

    base_url: str
    model: str
    api_key: str = "EMPTY"
    temperature: float = 0.7
    max_tokens: int = 512
    timeout: float = 120.0
    http_client: httpx.Client | None = field(default=None, compare=False)
    tool_listener: ToolListener | None = field(default=None, compare=False)
    """Told about every tool call of the run (the simulator's view of the world)."""


def recorded_chat_model(
    chat: ChatSettings,
    recorder: RunRecorder,
    harness: Harness | None = None,
    extra_callbacks: list[Any] | None = None,
) -> ChatOpenAI:
    """ChatOpenAI over HTTP with server-reported usage, timed by ``recorder``."""
    harness = harness or Harness()
    return ChatOpenAI(
        base_url=chat.base_url,
        model=chat.model,
        api_key=SecretStr(chat.api_key),
        temperature=chat.temperature,
        max_completion_tokens=chat.max_tokens,
        timeout=chat.timeout,
        max_retries=harness.model_client_retries,
        stream_usage=True,
        callbacks=[recorder, *(extra_callbacks or [])],
        http_client=chat.http_client,
    )


class BenchAgent(ABC):
    """One agent framework, run the same way as the others, inside one :class:`Harness`."""

    name: ClassVar[str]
    harness: Harness = Harness()
    sleep: Sleep = time.sleep
    guards_budget: ClassVar[bool] = False
    """The framework has no token budget of its own: the harness's guard stops it."""

    def run(
        self, scenario: Scenario, world: BenchWorld, chat: ChatSettings, *, trial: int = 0
    ) -> RunRecord:
        """Run ``scenario`` on ``world`` with ``chat``; never raises for what the agent does."""
        recorder = RunRecorder()
        guard = [TokenBudgetGuard(self.harness.token_budget)] if self.guards_budget else []
        model = recorded_chat_model(chat, recorder, self.harness, guard)
        return self.run_model(scenario, world, model, chat, recorder, trial=trial)

    def run_model(
        self,
        scenario: Scenario,
        world: BenchWorld,
        model: ChatOpenAI,
        chat: ChatSettings,
        recorder: RunRecorder,
        *,
        trial: int = 0,
    ) -> RunRecord:
        """:meth:`run` with a model already built (and reporting to ``recorder``)."""
        registry = RecordingRegistry.wrap(world.registry(), recorder, chat.tool_listener)
        try:
            outcome = self.execute(scenario, registry, model, chat)
        except BudgetExceeded as exc:
            outcome = Outcome(termination="partial", reason=str(exc))
        except Exception as exc:  # a crash is a termination like any other
            outcome = Outcome(termination="error", reason=f"{type(exc).__name__}: {exc}"[:500])
        record = recorder.record(
            agent=self.name,
            scenario_id=scenario.id,
            category=scenario.category,
            trial=trial,
            outcome=outcome,
        )
        gated = write_tools(registry)
        record.unintended_writes_executed = unintended_executed(
            scenario, record.tool_calls, gated, OPERATOR
        )
        return record

    def settings(self) -> VariantSettings:
        """The effective settings this variant runs with (see :mod:`tether_bench.harness`)."""
        raise NotImplementedError(f"{self.name} has no harness settings")

    @abstractmethod
    def execute(
        self,
        scenario: Scenario,
        registry: RecordingRegistry,
        model: ChatOpenAI,
        chat: ChatSettings,
    ) -> Outcome:
        """Run the agent on ``scenario.task`` to its end; ``model`` is built from ``chat``."""
