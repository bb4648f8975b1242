"""The calibration command runs as documented and says how far it is from its targets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tether_bench.scenarios import SCENARIO_PATH
from tether_bench.simulator import calibrate


def test_the_default_scenarios_are_the_shipped_ones_and_hold_the_payment_flow() -> None:
    parser_default = SCENARIO_PATH  # what --scenarios defaults to
    flow = calibrate.payment_flow(calibrate.load_scenarios(parser_default))
    assert len(flow) >= 10


def test_the_command_prints_its_figures_and_their_residuals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = SCENARIO_PATH.read_text(encoding="utf-8").splitlines()
    flow = [line for line in lines if line.strip() and _is_flow(json.loads(line))][:2]
    small = tmp_path / "flow.jsonl"
    small.write_text("\n".join(flow) + "\n", encoding="utf-8")
    calibrate.main(["--trials", "1", "--scenarios", str(small)])
    out = capsys.readouterr().out
    assert "flow, 2 runs" in out and "agent_executor, 2 runs of 2 scenarios" in out
    assert out.count("| ") >= 6 * 4  # one row per real figure, each with its residual
    success = float(out.split("tool-call success ")[1].split("%")[0]) / 100
    points = float(out.split("residuals ")[1].split(" points")[0])
    assert points == pytest.approx((success - calibrate.TARGET_TOOL_CALL_SUCCESS) * 100, abs=0.06)


def _is_flow(row: dict) -> bool:
    tools = tuple(action["tool"] for action in row.get("gold_actions", []))
    return tools == calibrate.PAYMENT_FLOW


def test_the_measures_count_as_the_real_figures_define_them() -> None:
    from tether_bench.records import RunRecord, ToolCall
    from tether_bench.scenarios import Scenario, ToolAction
    from tether_bench.simulator.measures import measure

    def call(tool: str, turn: int, status: str = "success", arguments: object = None) -> ToolCall:
        return ToolCall(
            tool=tool,
            arguments={"a": 1} if arguments is None else arguments,
            status=status,  # type: ignore[arg-type]
            start=0,
            end=0,
            turn=turn,
        )

    calls = [
        call("x", 0, "error"),  # a transient failure the harness retried in place ...
        call("x", 0, "error"),  # ... so turn 0 is one failed call
        call("x", 1),
        call("x", 2, "error", arguments="{broken"),  # a malformed reply, not a call
        call("x", 3),
        call("x", 4),
        call("y", 5),
    ]
    decisions = [
        {"fault": "bad_json", "move": "fault"},
        {"fault": "bad_json", "move": "repeat"},
        {"fault": None, "move": "fix"},
        {"fault": "text_and_call", "move": "fault"},  # tau2 rejects it; every client runs it
        {"fault": "empty_reply", "move": "fault"},  # both: rejected, and no call for a client
    ]
    record = RunRecord(
        agent="a",
        scenario_id="s",
        category="c",
        termination="completed",
        wall_s=0,
        tool_calls=calls,
        extra={"sim_decisions": decisions},
    )
    empty = RunRecord(agent="a", scenario_id="s", category="c", termination="completed", wall_s=0)
    scenario = Scenario(
        id="s",
        category="db",
        language="en",
        task="t",
        gold_answer="a",
        gold_actions=[ToolAction(tool="x", arguments={})],
    )
    got = {k: (r.k, r.n) for k, r in measure([record, empty], [scenario]).items()}
    assert got == {
        "repeat_after_failure": (1, 1),
        "repeat_after_success": (2, 3),  # x->x, x->x, x->y
        "stickiness": (2, 3),  # after x,x: x, x (yes, yes), then y (no)
        "malformed": (2, 5),  # text and a call, an empty reply: tau2's rule
        "native_breaking": (3, 5),  # the call written as text (twice), the empty reply
        "format_fixed": (1, 3),  # the second bad reply was fixed; the first and last not
        "no_call": (1, 2),
    }
