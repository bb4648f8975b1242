"""tether as benchmarked: the graph with default settings on the world's registry.

Only what every agent shares is set (endpoint, model, temperature, completion cap, timeout).
Approval gates for side-effecting tools, where the settings have them, are switched off: no
baseline has a human to ask, and a run that waits for approval would measure nothing.
"""

from __future__ import annotations

import time
from typing import Any

from langchain_openai import ChatOpenAI

from tether.bench.agents.base import BenchAgent, ChatSettings, Sleep
from tether.bench.instrument import RecordingRegistry
from tether.bench.records import Outcome, TerminationKind
from tether.bench.scenarios import Scenario
from tether.graph.builder import build_graph
from tether.settings import AgentSettings, load_settings

_STATUSES: dict[str, TerminationKind] = {
    "completed": "completed",
    "max_steps": "max_steps",
    "no_progress": "no_progress",
    "failed": "failed",
    "partial": "partial",
}


def tether_settings(
    *, base_url: str, model: str, temperature: float, max_tokens: int, timeout: float
) -> AgentSettings:
    """Default AgentSettings with the shared chat parameters (and no approval gates)."""
    values: dict[str, Any] = {
        "base_url": base_url,
        "model": model,
        "temperature": temperature,
        "max_tokens": max_tokens,
        "request_timeout": timeout,
    }
    if "approval_tools" in AgentSettings.model_fields:
        values["approval_tools"] = []
    return load_settings(**values)


class TetherAgent(BenchAgent):
    """tether's loop: budgets, breaker, retries in place, repair of the model's JSON."""

    name = "tether"

    def __init__(self, *, sleep: Sleep = time.sleep, seed: int = 0) -> None:
        self.sleep = sleep
        self.seed = seed

    def execute(
        self,
        scenario: Scenario,
        registry: RecordingRegistry,
        model: ChatOpenAI,
        chat: ChatSettings,
    ) -> Outcome:
        settings = tether_settings(
            base_url=chat.base_url,
            model=chat.model,
            temperature=chat.temperature,
            max_tokens=chat.max_tokens,
            timeout=chat.timeout,
        )
        graph = build_graph(
            settings, model=model, registry=registry, sleep=self.sleep, seed=self.seed
        )
        state = graph.invoke({"task": scenario.task})
        status = str(state.get("status", ""))
        return Outcome(
            answer=state.get("answer"),
            termination=_STATUSES.get(status, "error"),
            reason=str(state.get("reason", "")),
        )
