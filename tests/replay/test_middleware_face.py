"""The middleware face of tether replay: small hand-built conversations replayed through
``create_agent`` with tether's middleware, and what the outcome says tether did."""

from __future__ import annotations

import json

from tether import AgentSettings
from tether_replay import replay_one
from tether_replay.records import Call, Conversation, Reply, Result, Turn
from tether_replay.tools import ToolSpec

RESERVATION = {
    "type": "object",
    "properties": {"reservation_id": {"type": "string"}},
    "required": ["reservation_id"],
}
SPECS = [
    ToolSpec("get_reservation", "Look up a reservation.", RESERVATION),
    ToolSpec("cancel_reservation", "Cancel a reservation.", RESERVATION, side_effects=True),
]
ARGS = {"reservation_id": "ABC123"}
ACTIVE = json.dumps({"reservation_id": "ABC123", "status": "active"})
CANCELLED = json.dumps({"reservation_id": "ABC123", "status": "cancelled"})


def call(name: str, call_id: str) -> Reply:
    return Reply("", (Call(name, ARGS, call_id),), usage=(300, 10))


def conversation(*turns: Turn) -> Conversation:
    return Conversation(uid="hand-built", turns=turns, reward=1.0, cohort="test")


def test_a_read_is_recalled_until_a_write_succeeds_then_runs_again() -> None:
    """The repeat guard answers the same read from its record while nothing has changed,
    and runs it again once the cancel succeeded (the write makes the record stale): one
    recall, none stale."""
    turn = Turn(
        "Check reservation ABC123, then cancel it.",
        (
            call("get_reservation", "c1"),
            call("get_reservation", "c2"),
            call("cancel_reservation", "c3"),
            call("get_reservation", "c4"),
            Reply("Reservation ABC123 is cancelled."),
        ),
        {
            "c1": Result("get_reservation", ACTIVE),
            "c2": Result("get_reservation", ACTIVE),
            "c3": Result("cancel_reservation", CANCELLED),
            "c4": Result("get_reservation", CANCELLED),
        },
    )
    outcome = replay_one(conversation(turn), SPECS, face="middleware")
    assert (outcome.recalls, outcome.stale_recalls) == (1, 0)
    assert [(p.call, p.detail) for p in outcome.points if p.what == "recall"] == [
        (2, "get_reservation")
    ]
    assert not outcome.stopped


def test_budget_stop_with_a_later_logged_write_cuts_the_write() -> None:
    """The first turn's lookup spent nearly the whole budget: tether asks for the last answer
    (the turn's logged one) and ends the turn partial, so the cancel the next turn made
    (successfully) is cut, from the next turn's first call."""
    first = Turn(
        "Look up reservation ABC123.",
        (
            Reply("", (Call("get_reservation", ARGS, "c1"),), usage=(2400, 10)),
            Reply("It is active."),
        ),
        {"c1": Result("get_reservation", ACTIVE)},
    )  # 2,400 in is plausible for the prompt (usage far above it is counted instead)
    second = Turn(
        "Cancel it.",
        (call("cancel_reservation", "c2"), Reply("Cancelled.")),
        {"c2": Result("cancel_reservation", CANCELLED)},
    )
    settings = AgentSettings(token_budget=2500)
    outcome = replay_one(conversation(first, second), SPECS, settings, face="middleware")
    assert outcome.stopped and outcome.cause == "budget" and outcome.status == "partial"
    assert outcome.stop_call == 3
    assert outcome.cuts_work and outcome.cuts_write


def test_an_answer_sent_back_is_counted_with_its_note() -> None:
    """A cancel claimed with no cancel run: the final-answer check sends it back once, with
    a note kept in the conversation; the model gives the same answer, which is taken."""
    turn = Turn("Please cancel reservation ABC123.", (Reply("ABC123 is cancelled."),))
    outcome = replay_one(conversation(turn), SPECS, face="middleware")
    assert outcome.final_sent_back and outcome.last_sent_back
    assert outcome.notes == 1
    assert [p.call for p in outcome.points if p.what == "sent_back"] == [1]
    assert outcome.status == "completed" and not outcome.stopped


def test_a_turn_whose_log_ends_on_a_call_leaves_the_next_turn_playable() -> None:
    """The first turn's log ends on a tool call (tether asks for a reply it lacks): the turn
    ends there and the next one is replayed on the same thread, its answer sent back."""
    first = Turn(
        "Look up reservation ABC123.",
        (call("get_reservation", "c1"),),
        {"c1": Result("get_reservation", ACTIVE)},
    )
    second = Turn("Please cancel reservation ABC123.", (Reply("ABC123 is cancelled."),))
    outcome = replay_one(conversation(first, second), SPECS, face="middleware")
    assert [p.call for p in outcome.points if p.what == "sent_back"] == [2]
    assert outcome.last_sent_back and not outcome.stopped
