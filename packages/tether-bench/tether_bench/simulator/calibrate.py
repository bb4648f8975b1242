"""Calibrate a persona against real runs, never against tether's results.

Two sets of real figures, each measured on the agent closest to the loop that produced it:

* **Qwen2.5-7B-Instruct on tau2 airline** (``QWEN_TARGETS``: repeats after a failure and
  after a success, stickiness, malformed replies and their fixes, runs with no tool call).
  tau2's loop has no controls of its own but sends a message back for a malformed reply, so
  these are measured on ``agent_executor`` (``handle_parsing_errors=True`` does the same)
  over every shipped scenario; ``create_agent_stock`` ends a run on a malformed call, which
  would hide every fix.
* **The design note's AgentExecutor run** (ReAct, ``handle_parsing_errors=True``, step cap
  10): 78% tool-call success and 5.7 steps per run, on the note's payment flow
  (query_order, compute_discount, pay_order), measured on ``agent_executor`` over those
  scenarios.

Both run under the benchmark's own harness (token budget and retry policy; the design note's
step cap for the second) and print every figure with its residual (simulated minus real):

    python -m tether_bench.simulator.calibrate --persona strong --trials 2
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from tether_bench.agents import make_agent
from tether_bench.agents.base import ChatSettings
from tether_bench.harness import Harness
from tether_bench.records import RunRecord
from tether_bench.scenarios import SCENARIO_PATH, Scenario, load_scenarios
from tether_bench.simulator.core import LatencyModel, Simulator
from tether_bench.simulator.measures import measure, residuals
from tether_bench.simulator.personas import Persona, persona_from_spec
from tether_bench.simulator.server import SimulatorServer
from tether_bench.worlds import WorldFactory, prepare

STEP_CAP = 10
TARGET_TOOL_CALL_SUCCESS = 0.78
TARGET_STEPS = 5.7
PAYMENT_FLOW = ("query_order", "compute_discount", "pay_order")
QWEN_LOOP = "agent_executor"
DESIGN_NOTE_LOOP = "agent_executor"


@dataclass(frozen=True)
class Calibration:
    """AgentExecutor's figures on one persona."""

    runs: int
    tool_call_success: float
    mean_steps: float

    @property
    def residuals(self) -> tuple[float, float]:
        """Measured minus target: tool-call success (a fraction) and mean steps."""
        return (
            self.tool_call_success - TARGET_TOOL_CALL_SUCCESS,
            self.mean_steps - TARGET_STEPS,
        )


def payment_flow(scenarios: Sequence[Scenario]) -> list[Scenario]:
    """The scenarios whose plan is the design note's flow, exactly."""
    return [s for s in scenarios if tuple(a.tool for a in s.gold_actions) == PAYMENT_FLOW]


def run_agent(
    agent_name: str,
    scenarios: Sequence[Scenario],
    model: Persona,
    *,
    trials: int,
    seed: int,
    harness: Harness,
) -> list[RunRecord]:
    """Every scenario and trial of one agent on the simulator, with its decisions kept."""
    simulator = Simulator(scenarios, seed=seed, persona=model, latency=LatencyModel.instant())
    agent = make_agent(agent_name, harness)
    records: list[RunRecord] = []
    with SimulatorServer(simulator) as server, WorldFactory() as worlds:
        for scenario in scenarios:
            for trial in range(trials):
                name = simulator.model_name(scenario.id, trial, "calibrate")
                chat = ChatSettings(base_url=server.base_url, model=name)
                with worlds.fresh() as world:
                    prepare(world, scenario)
                    record = agent.run(scenario, world, chat, trial=trial)
                decisions = simulator.decisions(name)
                record.extra["sim_decisions"] = [d.as_dict() for d in decisions]
                simulator.forget(name)
                records.append(record)
    return records


def calibrate(
    scenarios: Sequence[Scenario], model: Persona, *, trials: int, seed: int
) -> Calibration:
    """Run AgentExecutor (step cap 10) on each scenario and trial; return its figures."""
    records = run_agent(
        DESIGN_NOTE_LOOP, scenarios, model, trials=trials, seed=seed, harness=Harness(STEP_CAP)
    )
    asked = ok = 0
    for record in records:
        a, o = record.tool_turns()
        asked, ok = asked + a, ok + o
    return Calibration(
        runs=len(records),
        tool_call_success=ok / asked if asked else 0.0,
        mean_steps=statistics.fmean(r.steps for r in records) if records else 0.0,
    )


def qwen_table(records: Sequence[RunRecord], scenarios: Sequence[Scenario]) -> str:
    """The Qwen2.5-7B figures beside the simulated ones, as a markdown table."""
    lines = [
        "| measure | real (Qwen2.5-7B-Instruct) | simulated | residual (points) |",
        "|---|---|---|---|",
    ]
    for target, sim, residual in residuals(measure(records, scenarios)):
        shown = "-" if residual is None else f"{residual:+.1f}"
        lines.append(f"| {target.label} | {target.real} | {sim} | {shown} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--persona", default="strong", help="a persona spec (name;trait=v)")
    parser.add_argument("--trials", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scenarios", default=str(SCENARIO_PATH))
    args = parser.parse_args(argv)
    model = persona_from_spec(args.persona)
    everything = load_scenarios(args.scenarios)
    records = run_agent(
        QWEN_LOOP, everything, model, trials=args.trials, seed=args.seed, harness=Harness()
    )
    print(f"persona {model.name}: {QWEN_LOOP}, {len(records)} runs of {len(everything)} scenarios")
    print(qwen_table(records, everything))
    flow = payment_flow(everything)
    result = calibrate(flow, model, trials=args.trials, seed=args.seed)
    print(
        f"\n{DESIGN_NOTE_LOOP} on the design note's flow, {result.runs} runs: "
        f"tool-call success {result.tool_call_success:.1%} "
        f"(target {TARGET_TOOL_CALL_SUCCESS:.0%}), "
        f"mean steps {result.mean_steps:.2f} (target {TARGET_STEPS}); "
        f"residuals {result.residuals[0] * 100:+.1f} points, {result.residuals[1]:+.2f} steps"
    )


if __name__ == "__main__":
    main()
