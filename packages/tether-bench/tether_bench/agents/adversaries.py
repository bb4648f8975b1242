"""Agents built to fool the judge: each must score (almost) nothing, while gold scores 100%.

* ``hedge``: calls no tool; one constant answer that refuses, asks for an id, blames a missing
  tool and lists every status, so some phrase matches many scenarios.
* ``hedge_numbers``: the hedge plus every id and number in the task.
* ``random_calls``: a few real calls drawn at random from the other scenarios' gold plans,
  then an answer reciting the facts those calls returned.
* ``gold_wrong_answer``: the gold plan, then the gold answer of a scenario in another category.
* ``words_no_write``: the gold plan without its side-effecting calls, then the gold answer.

An adversary is scored on the scenarios where its behaviour differs from the gold replay's
(:meth:`Adversary.differs_from_gold`): where it would do exactly what gold does (no write to
skip), passing is correct, not a fooled judge.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any, ClassVar

from langchain_openai import ChatOpenAI
from tether.decisions.grounding import ids_in, numbers_in

from tether_bench.agents.base import BenchAgent, ChatSettings
from tether_bench.instrument import RecordingRegistry
from tether_bench.records import Outcome
from tether_bench.scenarios import Scenario, ToolAction

HEDGE = (
    "I'm sorry, I can't complete this right now: no tool here can do it, or I need the order "
    "id. The order may be pending, paid, shipped, delivered, cancelled or refunded. "
    "抱歉，无法完成：请提供订单号；订单可能待支付、已支付、已发货、已送达、已取消或已退款。"
)
TRANSIENT_ATTEMPTS = 3


def call(registry: RecordingRegistry, action: ToolAction) -> dict[str, Any]:
    """One action, with transient failures retried in place (as the real agents do)."""
    result: dict[str, Any] = {}
    for _ in range(TRANSIENT_ATTEMPTS):
        result = dict(registry.invoke(action.tool, action.arguments))
        if not (result["status"] == "error" and result["meta"].get("transient")):
            break
    return result


class Adversary(BenchAgent):
    """An agent that acts without a model; subclasses say what it does and answers."""

    name = "adversary"

    def __init__(self, scenarios: Sequence[Scenario]) -> None:
        self.scenarios = list(scenarios)

    def differs_from_gold(self, scenario: Scenario) -> bool:
        return True

    def execute(
        self, scenario: Scenario, registry: RecordingRegistry, model: ChatOpenAI, chat: ChatSettings
    ) -> Outcome:
        return Outcome(answer=self.act(scenario, registry), termination="completed", reason="")

    def act(self, scenario: Scenario, registry: RecordingRegistry) -> str:
        raise NotImplementedError


class Hedge(Adversary):
    name = "hedge"

    def act(self, scenario: Scenario, registry: RecordingRegistry) -> str:
        return HEDGE


class HedgeNumbers(Adversary):
    name = "hedge_numbers"

    def act(self, scenario: Scenario, registry: RecordingRegistry) -> str:
        facts = [*sorted(ids_in(scenario.task)), *(str(n) for n in numbers_in(scenario.task))]
        return f"{HEDGE} About: {', '.join(facts)}." if facts else HEDGE


class RandomCalls(Adversary):
    name = "random_calls"

    def act(self, scenario: Scenario, registry: RecordingRegistry) -> str:
        rng = random.Random(f"random_calls:{scenario.id}")
        own = scenario.gold_actions
        pool = [a for s in self.scenarios for a in s.gold_actions if a not in own]
        facts: list[str] = []
        for action in rng.sample(pool, min(len(pool), rng.randint(1, 4))):
            result = call(registry, action)
            if result["status"] == "success":
                facts.append(json.dumps(result["data"], ensure_ascii=False, default=str)[:300])
        return "Done. " + " ".join(facts) if facts else HEDGE


class GoldWrongAnswer(Adversary):
    name = "gold_wrong_answer"

    def act(self, scenario: Scenario, registry: RecordingRegistry) -> str:
        for action in scenario.gold_actions:
            call(registry, action)
        index = next(i for i, s in enumerate(self.scenarios) if s.id == scenario.id)
        rotated = self.scenarios[index + 1 :] + self.scenarios[:index]
        other = next((s for s in rotated if s.category != scenario.category), scenario)
        return other.gold_answer


class WordsNoWrite(Adversary):
    name = "words_no_write"
    writes: ClassVar[frozenset[str]] = frozenset(
        {"pay_order", "refund_payment", "cancel_order", "update_shipping_address"}
    )

    def differs_from_gold(self, scenario: Scenario) -> bool:
        return any(a.tool in self.writes for a in scenario.gold_actions)

    def act(self, scenario: Scenario, registry: RecordingRegistry) -> str:
        for action in scenario.gold_actions:
            if action.tool not in self.writes:
                call(registry, action)
        return scenario.gold_answer


ADVERSARIES: tuple[type[Adversary], ...] = (
    Hedge,
    HedgeNumbers,
    RandomCalls,
    GoldWrongAnswer,
    WordsNoWrite,
)
