"""Agents without a model: the gold replay, and scripted trajectories for testing the judge.

The gold-replay agent must score 100% (the scenarios and the judge agree); a scripted wrong
trajectory must score 0% (the judge cannot be fooled). Both call the world's tools through
the same recording registry as the real agents.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from langchain_openai import ChatOpenAI

from tether_bench.agents.base import BenchAgent, ChatSettings
from tether_bench.instrument import RecordingRegistry
from tether_bench.records import Outcome, TerminationKind
from tether_bench.scenarios import NumberOutput, Scenario, ToolAction

TRANSIENT_ATTEMPTS = 3


@dataclass(frozen=True)
class Script:
    """What a scripted agent does: these calls in order, then this ending."""

    actions: list[ToolAction] = field(default_factory=list)
    answer: str | None = None
    termination: TerminationKind = "completed"
    reason: str = "scripted"
    replies: list[str] = field(default_factory=list)
    """A conversation's replies before the last (the user's messages are the scenario's)."""


class ScriptedAgent(BenchAgent):
    """Runs ``script_for(scenario)``; transient failures are retried in place."""

    name = "scripted"

    def __init__(self, script_for: Callable[[Scenario], Script], *, name: str | None = None):
        self.script_for = script_for
        if name:
            self.name = name  # type: ignore[misc]

    def execute(
        self,
        scenario: Scenario,
        registry: RecordingRegistry,
        model: ChatOpenAI,
        chat: ChatSettings,
    ) -> Outcome:
        script = self.script_for(scenario)
        for action in script.actions:
            for _ in range(TRANSIENT_ATTEMPTS):
                result = registry.invoke(action.tool, action.arguments)
                if not (result["status"] == "error" and result["meta"].get("transient")):
                    break
        outcome = Outcome(
            answer=script.answer, termination=script.termination, reason=script.reason
        )
        if scenario.turns:
            sent = scenario.messages[: len(script.replies) + 1]
            return outcome.model_copy(
                update={"messages": sent, "replies": [*script.replies, script.answer]}
            )
        return outcome


def gold_script(scenario: Scenario) -> Script:
    """The scenario's own plan and reference answer (and, for a conversation, a reference
    reply to every earlier message)."""
    return Script(
        actions=list(scenario.gold_actions),
        answer=scenario.gold_answer,
        termination="completed",
        reason="gold replay",
        replies=[gold_reply(scenario, k) for k in range(len(scenario.turns) - 1)],
    )


def gold_reply(scenario: Scenario, index: int) -> str:
    """A reference reply to message ``index``: it asks for what the next message answers, or
    states the outputs that message asked for."""
    asked = scenario.turns[index + 1].answers
    if asked is not None:
        return f"Please provide the {asked.text}."
    outputs = scenario.turns[index].outputs
    return "; ".join(o.number if isinstance(o, NumberOutput) else o.text for o in outputs)


class GoldReplayAgent(ScriptedAgent):
    """Plays each scenario's gold actions and answers with its gold answer."""

    name = "gold"

    def __init__(self) -> None:
        super().__init__(gold_script)
