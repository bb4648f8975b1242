"""Identical benchmark runs write identical results: no clock reaches a decision or a result.

Tool envelopes carry no wall-clock latency (the recording registry's clock is stopped), the
simulator reads any latency it is sent as 0, the demo world's clock is pinned, tether's tools
see a stable run id, and the only fields of results.json that may differ between two runs of
one command are the timings :data:`tether_bench.report.TIMING_FIELDS` names.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from tether_bench.agents import VARIANTS
from tether_bench.cli import bench_app
from tether_bench.report import TIMING_FIELDS, without_timings
from tether_bench.scenarios import Scenario
from tether_bench.simulator import FAULT_KINDS, PERFECT, LatencyModel, Simulator, model_name
from tether_bench.simulator.faults import draw
from tether_bench.simulator.reading import read_request
from tether_bench.worlds import WORLD_CLOCK, WorldFactory, replay
from typer.testing import CliRunner

from tests.bench.conftest import SCENARIO_FILE
from tests.bench.sim_prompts import FORMATS, Exchange, request

PAY = "api-pay-01"
TOOLS = {
    "query_order": "Look up an order.",
    "compute_discount": "Price an order.",
    "pay_order": "Pay an order.",
}
PICKED = ("api-refund-01", "fault-pay-02")
"""A refund and a payment through a transient fault (their ids and times are in the results)."""


def failure(latency_s: float) -> str:
    """The validation error of a call without ``order_id``, as tether's registry stamps it."""
    meta = {"error_type": "validation_error", "transient": False, "latency_s": latency_s}
    message = "query_order: invalid arguments: order_id: Field required"
    return json.dumps({"status": "error", "message": message, "meta": meta})


def result(latency_s: float) -> str:
    data = {"order_id": "ORD-2024-001", "subtotal": "2471.60", "shipping_fee": "0.00"}
    return json.dumps({"status": "success", "data": data, "meta": {"latency_s": latency_s}})


@pytest.mark.parametrize("layout", FORMATS)
def test_results_equal_but_for_their_latency_are_read_as_the_same(layout: str) -> None:
    """Same numbers, lines, results and result signatures, whatever the calls took."""
    call = ("query_order", {"order_id": "ORD-2024-001"})
    views = [
        read_request(
            request(layout, "Pay ORD-2024-001.", TOOLS, [Exchange(*call, result(a))] * 2),
            TOOLS,
        )
        for a in (0.000412, 1.2e-05)
    ]
    assert views[0] == views[1]
    shown = views[0].observations
    assert len(shown) == 2 and shown[0].signature() == shown[1].signature()
    assert {v.envelope["meta"]["latency_s"] for v in shown} == {0}
    latency_digits = {Decimal("0.000412"), Decimal("1.2"), Decimal("5")}  # 1.2e-05 misread
    assert not views[0].numbers & latency_digits  # no digit of a latency is a fact


@pytest.mark.parametrize("layout", FORMATS)
def test_an_error_repeated_but_for_its_latency_is_not_new_feedback(
    by_id: dict[str, Scenario], layout: str
) -> None:
    """The simulator's faulty call, its error, the same call again and the same error: the
    second error reads exactly as the first (it still names the field), whatever each call
    took. Before latency was read as 0, a second error with another latency was new text and
    a repeated one was not, so timing decided between ``fix_rate`` and ``blind_fix_rate``."""
    weights = dict.fromkeys(FAULT_KINDS, 0.0) | {"missing_argument": 1.0}
    model = PERFECT.with_overrides(
        fault_rate=1.0, fault_weights=weights, fix_rate=0.5, blind_fix_rate=0.0
    )
    # the first error is read (u_fix >= fix_rate: the call is repeated anyway); the second
    # still names the field, so the call is fixed (u_fix < fix_rate), at any latency
    seed = next(s for s in range(200) if draw(s, PAY, 0, 1).u_fix >= 0.5 > draw(s, PAY, 0, 2).u_fix)
    acts = {}
    for latencies in [(0.000412, 0.000412), (0.000412, 0.000397)]:
        sim = Simulator([by_id[PAY]], seed=seed, persona=model, latency=LatencyModel.instant())
        name = model_name(PAY, 0, "t")
        task = by_id[PAY].task
        history: list[Exchange] = []
        sim.reply(name, request(layout, task, TOOLS, history))
        for latency in latencies:
            history.append(Exchange("query_order", {}, failure(latency)))
            sim.reply(name, request(layout, task, TOOLS, history))
        acts[latencies] = [(d.move, d.act()) for d in sim.decisions(name)]
    same, different = acts.values()
    assert same == different
    assert [move for move, _ in same] == ["fault", "repeat", "fix"]


def _bench(out: Path, scenarios: Path, *extra: str) -> dict[str, Any]:
    args = ["--scenarios", str(scenarios), "--agents", ",".join(VARIANTS), "--seeds", "0"]
    args += ["--fault-rate", "0.5", "--no-progress", "--no-charts"]
    result = CliRunner().invoke(bench_app, [*args, *extra, "--out", str(out)])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads((out / "strong-seed0" / "results.json").read_text())
    return data


def test_the_same_command_twice_writes_the_same_results(tmp_path: Path) -> None:
    """Every agent on a refund and on a payment through a fault, twice: the two results.json
    files are equal but for the named timing fields (written the same way, byte for byte, once
    those are dropped), and suite.md is equal byte for byte. Over two worker processes, with
    simulated latency on, the results are those of the first run: the configuration that
    differs (``backend.latency``, ``backend.workers``) and the timings aside.

    The command repeated runs in one process and the one that differs in two: each worker
    process starts an interpreter and imports every agent's framework, which took three times
    as long as the runs themselves, and the comparison of two-process results with one-process
    ones is what finds a difference that the split into processes makes."""
    lines = SCENARIO_FILE.read_text(encoding="utf-8").splitlines()
    picked = [line for line in lines if line.strip() and json.loads(line)["id"] in PICKED]
    scenarios = tmp_path / "picked.jsonl"
    scenarios.write_text("\n".join(picked) + "\n", encoding="utf-8")

    first = _bench(tmp_path / "a", scenarios, "--no-sim-latency", "--workers", "1")
    second = _bench(tmp_path / "b", scenarios, "--no-sim-latency", "--workers", "1")
    timed = _bench(tmp_path / "c", scenarios, "--sim-latency", "--workers", "2")

    runs = first["runs"]
    assert len(runs) == len(PICKED) * len(VARIANTS)
    assert any(f for r in runs for f in r["extra"]["sim_faults"])  # the model erred
    paid = [c["result"] for r in runs for c in r["tool_calls"] if c["tool"] == "pay_order"]
    assert any(p and p.get("created_at") for p in paid)  # a clock time reached a result
    assert any(r["agent"] == "tether" and r["tool_calls"] for r in runs)
    assert first["wall_s"] > 0 and runs[0]["model_calls"][0]["end"] > 0  # timings still kept

    plain = json.dumps(without_timings(first), ensure_ascii=False, indent=1)
    assert plain == json.dumps(without_timings(second), ensure_ascii=False, indent=1)
    suite = (tmp_path / "a" / "suite.md").read_bytes()
    assert suite == (tmp_path / "b" / "suite.md").read_bytes()

    assert timed["backend"].pop("latency") != first["backend"].pop("latency")
    assert timed["backend"].pop("workers") == 2 and "workers" not in first["backend"]
    assert without_timings(timed) == without_timings(first)
    assert suite == (tmp_path / "c" / "suite.md").read_bytes()


def test_the_world_clock_is_pinned_while_a_factory_is_open(by_id: dict[str, Scenario]) -> None:
    """A payment made in a benchmark world is made at WORLD_CLOCK, not at the wall clock."""
    from tether_world import queries

    own_clock = queries.utcnow
    with WorldFactory() as worlds, worlds.fresh() as world:
        paid = replay(world.registry(), by_id[PAY].gold_actions, PAY)[-1]
        assert paid["data"]["created_at"] == WORLD_CLOCK.isoformat(timespec="seconds")
        assert queries.utcnow() == WORLD_CLOCK
    assert queries.utcnow is own_clock  # released (still pinned if another factory is open)


def test_without_timings_drops_exactly_the_named_fields() -> None:
    payload = {
        "wall_s": 1.0,
        "info": {"seed": 0},
        "metrics": {"tether": {"p95_step_latency_s": 0.2, "success_rate": 0.5}},
        "runs": [
            {
                "wall_s": 2.0,
                "termination": "completed",
                "model_calls": [{"start": 0.0, "end": 0.1, "input_tokens": 7}],
                "tool_calls": [{"start": 0.1, "end": 0.2, "result": {"created_at": "x"}}],
                "summary": {"model_s": 0.1, "tool_s": 0.1, "step_latencies": [0.2], "steps": 1},
            }
        ],
    }
    assert without_timings(payload) == {
        "info": {"seed": 0},
        "metrics": {"tether": {"success_rate": 0.5}},
        "runs": [
            {
                "termination": "completed",
                "model_calls": [{"input_tokens": 7}],
                "tool_calls": [{"result": {"created_at": "x"}}],
                "summary": {"steps": 1},
            }
        ],
    }
    assert payload["wall_s"] == 1.0  # a copy: the payload itself is left as it was
    named = {key for keys in TIMING_FIELDS.values() for key in keys}
    assert named >= {"wall_s", "start", "end", "step_latencies"}
