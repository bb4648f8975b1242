"""The benchmarked agents, by name, behind one interface (:class:`BenchAgent`)."""

from __future__ import annotations

from collections.abc import Callable

from tether.bench.agents.base import BenchAgent, ChatSettings, make_chat_model

AGENT_NAMES: tuple[str, ...] = ("tether", "agent_executor", "create_agent")


def _tether() -> BenchAgent:
    from tether.bench.agents.tether_agent import TetherAgent

    return TetherAgent()


def _agent_executor() -> BenchAgent:
    from tether.bench.agents.agent_executor import AgentExecutorAgent

    return AgentExecutorAgent()


def _create_agent() -> BenchAgent:
    from tether.bench.agents.create_agent import CreateAgentAgent

    return CreateAgentAgent()


def _gold() -> BenchAgent:
    from tether.bench.agents.gold import GoldReplayAgent

    return GoldReplayAgent()


FACTORIES: dict[str, Callable[[], BenchAgent]] = {
    "tether": _tether,
    "agent_executor": _agent_executor,
    "create_agent": _create_agent,
    "gold": _gold,
}


def make_agent(name: str) -> BenchAgent:
    """The agent called ``name`` (tether, agent_executor, create_agent, or gold)."""
    try:
        factory = FACTORIES[name]
    except KeyError:
        raise ValueError(f"unknown agent {name!r}; known: {', '.join(FACTORIES)}") from None
    return factory()


__all__ = ["AGENT_NAMES", "BenchAgent", "ChatSettings", "make_agent", "make_chat_model"]
