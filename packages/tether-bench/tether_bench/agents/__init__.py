"""The benchmarked agents, by name, behind one interface (:class:`BenchAgent`).

Each baseline comes twice: as its docs recommend (``agent_executor``, ``create_agent``) and
stock (``*_stock``), so the report separates what output repair and control middleware bring;
``create_agent_tether`` is the recommended create_agent with tether's middleware added, so it
shows what tether's controls bring to an agent that keeps its own loop;
``create_agent_careful`` is the recommended create_agent with a hook that sends a malformed
reply back to the model (what a careful user adds, as LangChain's middleware docs show).
"""

from __future__ import annotations

from collections.abc import Callable

from tether_bench.agents.base import BenchAgent, ChatSettings, recorded_chat_model
from tether_bench.harness import Harness

VARIANTS: tuple[str, ...] = (
    "tether",
    "agent_executor",
    "agent_executor_stock",
    "create_agent",
    "create_agent_stock",
    "create_agent_tether",
    "create_agent_careful",
)
AGENT_NAMES = VARIANTS


def _tether(harness: Harness, protocol: str | None) -> BenchAgent:
    from tether_bench.agents.tether_agent import TetherAgent

    return TetherAgent(harness=harness, protocol=protocol)


def _tether_small(harness: Harness, protocol: str | None) -> BenchAgent:
    from tether_bench.agents.tether_agent import TetherSmallAgent

    return TetherSmallAgent(harness=harness, protocol=protocol)


def _agent_executor(stock: bool) -> Callable[[Harness, str | None], BenchAgent]:
    def make(harness: Harness, protocol: str | None) -> BenchAgent:
        from tether_bench.agents.agent_executor import AgentExecutorAgent

        return AgentExecutorAgent(harness=harness, handle_parsing_errors=not stock)

    return make


def _create_agent(stock: bool) -> Callable[[Harness, str | None], BenchAgent]:
    def make(harness: Harness, protocol: str | None) -> BenchAgent:
        from tether_bench.agents.create_agent import CreateAgentAgent

        return CreateAgentAgent(harness=harness, middleware=not stock)

    return make


def _create_agent_careful(harness: Harness, protocol: str | None) -> BenchAgent:
    from tether_bench.agents.create_agent_careful import CreateAgentCarefulAgent

    return CreateAgentCarefulAgent(harness=harness)


def _create_agent_tether(harness: Harness, protocol: str | None) -> BenchAgent:
    from tether_bench.agents.create_agent_tether import CreateAgentTetherAgent

    return CreateAgentTetherAgent(harness=harness)


def _gold(harness: Harness, protocol: str | None) -> BenchAgent:
    from tether_bench.agents.gold import GoldReplayAgent

    return GoldReplayAgent()


FACTORIES: dict[str, Callable[[Harness, str | None], BenchAgent]] = {
    "tether": _tether,
    "tether_small": _tether_small,
    "agent_executor": _agent_executor(stock=False),
    "agent_executor_stock": _agent_executor(stock=True),
    "create_agent": _create_agent(stock=False),
    "create_agent_stock": _create_agent(stock=True),
    "create_agent_tether": _create_agent_tether,
    "create_agent_careful": _create_agent_careful,
    "gold": _gold,
}


def make_agent(
    name: str, harness: Harness | None = None, protocol: str | None = None
) -> BenchAgent:
    """The agent called ``name`` (a variant, gold, or a tether agent with one control off,
    ``tether-no_<control>``: :mod:`tether_bench.ablation`), inside ``harness``; ``protocol``
    is tether's output protocol (the baselines have theirs fixed)."""
    from tether_bench.ablation import parse_variant

    ablated = parse_variant(name)
    if ablated is not None and ablated[0] in FACTORIES:
        from tether_bench.agents.tether_agent import TetherAgent

        base = make_agent(ablated[0], harness, protocol)
        if isinstance(base, TetherAgent):
            return base.without(ablated[1])
    try:
        factory = FACTORIES[name]
    except KeyError:
        raise ValueError(f"unknown agent {name!r}; known: {', '.join(FACTORIES)}") from None
    return factory(harness or Harness(), protocol)


def known_agent(name: str) -> bool:
    """Whether :func:`make_agent` makes an agent called ``name``."""
    try:
        make_agent(name)
    except ValueError:
        return False
    return True


__all__ = [
    "AGENT_NAMES",
    "VARIANTS",
    "BenchAgent",
    "ChatSettings",
    "known_agent",
    "make_agent",
    "recorded_chat_model",
]
