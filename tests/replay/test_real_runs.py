"""Recorded runs of real agents (tests/replay/fixtures, MIT), replayed through both of
tether's faces: each named case gets the decision the real-runs issue asks of it, and on the
sample no successful run is stopped losing work or a write, and no record is recalled stale.

The whole set (1,168 runs) is replayed by ``benchmarks/real_runs.py``; its figures are in the
README."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from tether_replay import RunOutcome, ToolFile, read_conversations, replay_one

FIXTURES = Path(__file__).parent / "fixtures"
FACES = ["loop", "middleware"]


@cache
def outcomes(face: str) -> dict[str, RunOutcome]:
    tools = ToolFile.read(FIXTURES / "real_tools.json")
    runs = read_conversations(FIXTURES / "real_runs.jsonl.gz")
    done = (replay_one(run, tools.specs_for(run), face=face) for run in runs)  # type: ignore[arg-type]
    return {outcome.uid[:8]: outcome for outcome in done}


@pytest.mark.parametrize("face", FACES)
def test_a_read_after_a_write_is_run_again_not_recalled_stale(face: str) -> None:
    """4083418c: get_order_details after modify_pending_order_items; b2edae74:
    get_reservation_details after update_reservation_flights and send_certificate."""
    for uid in ("4083418c", "b2edae74"):
        run = outcomes(face)[uid]
        assert run.stale_recalls == 0 and not run.stopped, uid


@pytest.mark.parametrize("face", FACES)
def test_a_refusal_the_user_asked_for_is_not_pushed_towards_the_write(face: str) -> None:
    """5612fc39: the user says four times "I really don’t want to cancel" (U+2019); 31d16db0:
    a refusal under the policy; fc077496: values the model worked out or the policy states;
    24acf8eb: a confirmation question before a write."""
    for uid in ("5612fc39", "31d16db0", "fc077496", "24acf8eb"):
        run = outcomes(face)[uid]
        assert not run.final_sent_back and run.withheld_replies == 0, uid


@pytest.mark.parametrize("face", FACES)
def test_a_failing_write_repeated_across_user_turns_is_refused(face: str) -> None:
    """8b4d82b4: Qwen2.5-7B repeats the same failing write in ten consecutive turns."""
    assert outcomes(face)["8b4d82b4"].refusals >= 5


@pytest.mark.parametrize("face", FACES)
def test_a_long_loop_is_stopped_by_its_fourth_identical_call(face: str) -> None:
    """fcbc7985: gpt-oss-120b calls the same tool with the same arguments about 90 times."""
    run = outcomes(face)["fcbc7985"]
    assert run.stopped and run.cause == "repeat"
    assert run.stop_call is not None and run.stop_call <= 12 < run.calls


@pytest.mark.parametrize("face", FACES)
def test_no_successful_run_of_the_sample_loses_work_to_a_stop(face: str) -> None:
    done = outcomes(face).values()
    assert len(done) == 48
    assert [r.uid for r in done if r.reward == 1.0 and (r.cuts_work or r.cuts_write)] == []
    assert sum(r.stale_recalls for r in done) == 0
