"""Serve the simulated model on 127.0.0.1, so ``tether run`` can be pointed at it.

``python -m tether_bench.simulator.serve --port 8100`` serves the scenarios of a file (by
default the README's task) and prints the two variables that point a run at it; the model
name picks the scenario whose plan the simulated persona follows. Stop it with Ctrl-C.
"""

from __future__ import annotations

import argparse
import contextlib
import threading
from pathlib import Path

from tether_bench.scenarios import DATA_DIR, load_scenarios
from tether_bench.simulator.core import LatencyModel, Simulator
from tether_bench.simulator.personas import PERSONAS, persona
from tether_bench.simulator.server import SimulatorServer

README_SCENARIOS = DATA_DIR / "readme.jsonl"
"""The README's ``make run`` task as a scenario: its plan is what the simulator follows."""


def serve_lines(server: SimulatorServer, scenario_ids: list[str]) -> list[str]:
    """What to print: one line of variables per scenario served."""
    names = [server.simulator.model_name(sid, 0, "run") for sid in scenario_ids]
    return [f"TETHER_BASE_URL={server.base_url} TETHER_MODEL={name}" for name in names]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=0, help="0: a free port")
    parser.add_argument("--scenarios", type=Path, default=README_SCENARIOS)
    parser.add_argument("--persona", choices=sorted(PERSONAS), default="strong")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    scenarios = load_scenarios(args.scenarios)
    simulator = Simulator(
        scenarios, seed=args.seed, persona=persona(args.persona), latency=LatencyModel()
    )
    with SimulatorServer(simulator, port=args.port) as server:
        print("\n".join(serve_lines(server, [s.id for s in scenarios])), flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
