"""Calibrate a persona against the one real measurement: AgentExecutor on Qwen2.5-7B.

The design note measured AgentExecutor (ReAct, ``handle_parsing_errors=True``) on
Qwen2.5-7B-Instruct at a step cap of 10: 78% tool-call success and 5.7 steps per run, on
the note's payment flow (query_order, compute_discount, pay_order). This runs AgentExecutor
alone, with that cap, on the same flow's scenarios against the simulator, and prints the
same two figures and their residuals (measured minus target), so a persona's rates can be
set to match. It runs under the benchmark's own harness (the same token budget and retry
policy as ``tether bench``), with the note's step cap. No other agent is run: the personas
are never tuned on tether's results.

    python -m tether_bench.simulator.calibrate --persona strong --trials 4
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from tether_bench.agents.agent_executor import AgentExecutorAgent
from tether_bench.agents.base import ChatSettings
from tether_bench.harness import Harness
from tether_bench.scenarios import SCENARIO_PATH, Scenario, load_scenarios
from tether_bench.simulator.core import LatencyModel, Simulator
from tether_bench.simulator.personas import Persona, persona
from tether_bench.simulator.server import SimulatorServer
from tether_bench.worlds import WorldFactory, prepare

STEP_CAP = 10
TARGET_TOOL_CALL_SUCCESS = 0.78
TARGET_STEPS = 5.7
PAYMENT_FLOW = ("query_order", "compute_discount", "pay_order")


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


def calibrate(
    scenarios: Sequence[Scenario], model: Persona, *, trials: int, seed: int
) -> Calibration:
    """Run AgentExecutor (step cap 10) on each scenario and trial; return its figures."""
    simulator = Simulator(scenarios, seed=seed, persona=model, latency=LatencyModel.instant())
    agent = AgentExecutorAgent(harness=Harness(step_cap=STEP_CAP))  # the benchmark's budget
    asked = ok = 0
    steps: list[int] = []
    with SimulatorServer(simulator) as server, WorldFactory() as worlds:
        for scenario in scenarios:
            for trial in range(trials):
                name = simulator.model_name(scenario.id, trial, "calibrate")
                chat = ChatSettings(base_url=server.base_url, model=name)
                with worlds.fresh() as world:
                    prepare(world, scenario)
                    record = agent.run(scenario, world, chat, trial=trial)
                simulator.forget(name)
                a, o = record.tool_turns()
                asked, ok = asked + a, ok + o
                steps.append(record.steps)
    return Calibration(
        runs=len(steps),
        tool_call_success=ok / asked if asked else 0.0,
        mean_steps=statistics.fmean(steps) if steps else 0.0,
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--persona", default="strong")
    parser.add_argument("--fault-rate", type=float, default=None)
    parser.add_argument("--fix-rate", type=float, default=None)
    parser.add_argument("--trials", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scenarios", default=str(SCENARIO_PATH))
    args = parser.parse_args(argv)
    model = persona(args.persona).with_overrides(fault_rate=args.fault_rate, fix_rate=args.fix_rate)
    flow = payment_flow(load_scenarios(args.scenarios))
    result = calibrate(flow, model, trials=args.trials, seed=args.seed)
    print(
        f"persona={model.name} fault_rate={model.fault_rate} fix_rate={model.fix_rate} "
        f"scenarios={len(flow)} runs={result.runs}: "
        f"tool-call success {result.tool_call_success:.1%} "
        f"(target {TARGET_TOOL_CALL_SUCCESS:.0%}), "
        f"mean steps {result.mean_steps:.2f} (target {TARGET_STEPS}); "
        f"residuals {result.residuals[0] * 100:+.1f} points, {result.residuals[1]:+.2f} steps"
    )


if __name__ == "__main__":
    main()
