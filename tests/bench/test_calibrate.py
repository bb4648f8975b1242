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
    assert "scenarios=2 runs=2" in out
    success = float(out.split("tool-call success ")[1].split("%")[0]) / 100
    points = float(out.split("residuals ")[1].split(" points")[0])
    assert points == pytest.approx((success - calibrate.TARGET_TOOL_CALL_SUCCESS) * 100, abs=0.06)


def _is_flow(row: dict) -> bool:
    tools = tuple(action["tool"] for action in row.get("gold_actions", []))
    return tools == calibrate.PAYMENT_FLOW
