"""What a conversation's prompt tells the simulated model: which user message it is answering,
and which of the work the user asked for it can know of.

A scenario with ``turns`` is several user messages on one thread (:mod:`tether_bench.user`).
The model answers the latest message its prompt shows: the last turn whose message the text
contains. The work it knows of is what the messages up to that one asked for, the gold
actions up to that turn's ``plan_end``; each action was asked for by the first turn whose
``plan_end`` passes it. What the reply must state is that turn's ``outputs`` (the scenario's
required outputs for the last turn).

A message only tells the model what it says. An action still to do whose asking message the
prompt does not show is work the model cannot know of: the answer to a question ("It's order
ORD-1") says which order, not what to do with it, when the message that said "pay my order"
is gone from the prompt. The model then asks the user what to do instead of guessing. Its own
earlier thoughts are not read for what the user wants: what the user asked is in the user's
messages, which is what an agent must carry from one message to the next.
"""

from __future__ import annotations

from tether_bench.scenarios import Scenario
from tether_bench.simulator import written
from tether_bench.simulator.reading import PromptView


def shown_turns(scenario: Scenario, view: PromptView) -> frozenset[int]:
    """The turns whose message the prompt shows (the task counts as turn 0)."""
    text = written.plain(view.text)
    return frozenset(
        i for i, message in enumerate(scenario.messages) if written.plain(message) in text
    )


def latest_turn(scenario: Scenario, view: PromptView) -> int:
    """The message the model is answering: the last one its prompt shows (0 if none is)."""
    return max(shown_turns(scenario, view), default=0)


def at_turn(scenario: Scenario, turn: int) -> Scenario:
    """The scenario as the model works on it at ``turn``: the plan so far, that reply's
    outputs. A scenario of one message is itself."""
    if not scenario.turns:
        return scenario
    now = scenario.turns[turn]
    last = turn == len(scenario.turns) - 1
    return scenario.model_copy(
        update={
            "gold_actions": scenario.gold_actions[: now.plan_end],
            "required_outputs": scenario.required_outputs if last else now.outputs,
        }
    )


def asked_by(scenario: Scenario, index: int) -> int:
    """The turn whose message asked for gold action ``index``."""
    return next(i for i, t in enumerate(scenario.turns) if t.plan_end > index)


def unseen_work(scenario: Scenario, view: PromptView, turn: int, position: int) -> bool:
    """Some action still to do at ``turn`` (from ``position``) was asked for in a message the
    prompt does not show."""
    if not scenario.turns:
        return False
    shown = shown_turns(scenario, view)
    end = scenario.turns[turn].plan_end
    return any(asked_by(scenario, k) not in shown for k in range(position, end))
