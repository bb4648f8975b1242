"""The simulated user of a conversation scenario: who sends the next message, if anyone.

A scenario with ``turns`` is a conversation on one thread: the task is the first message,
and after each reply the user reads it and decides what to say next. The user reads only
what the reply says, never which agent wrote it, and draws nothing at random, so every agent
meets the same user and the same reply gets the same next message:

* a scripted message (``answers`` unset, "now pay it") is sent after any reply;
* an answer to a question (``answers`` set: the user holds a value the task left out) is
  sent only when the reply asks for information and names what it asks for (one of the
  phrases, e.g. "order id", "which order"). A reply that does not ask (the agent acted on a
  value it made up, or gave up) ends the conversation: the user has nothing to answer.

A run that ended without a reply (a step cap, a budget stop, a crash) ends the conversation
too: the user has no reply to read.

Sources: in <real-runs>, every one of the 364 successful conversations that made a write asked
the user a question before its first write, and a successful conversation has a median of 5
user messages; the user there answers what it was asked and nothing more.
"""

from __future__ import annotations

from tether_bench.claims import read_claims
from tether_bench.records import Outcome
from tether_bench.scenarios import Scenario, TextOutput


def asks_for(reply: str, wanted: TextOutput) -> bool:
    """The reply asks the user for information and names what it wants (states ``wanted``)."""
    return read_claims(reply).asks_for_information and wanted.stated_in(reply)


def next_message(scenario: Scenario, sent: int, outcome: Outcome) -> str | None:
    """The user's next message once ``sent`` messages have had their replies (the last of
    them ``outcome``), or None: the conversation is over."""
    turns = scenario.turns
    if sent >= len(turns) or outcome.termination != "completed" or not outcome.answer:
        return None
    turn = turns[sent]
    if turn.answers is None or asks_for(outcome.answer, turn.answers):
        return turn.message
    return None
