"""A fault-injecting simulated model behind an OpenAI-compatible HTTP endpoint.

It plays each scenario's gold plan and makes the mistakes real models make, drawn from a
seeded generator keyed by scenario, trial and call index (see :mod:`.faults`), the same for
every agent. It measures how well an agent's loop copes with a fixed fault model, not how
good any model is.
"""

from tether.bench.simulator.core import LatencyModel, Simulator, UnknownSession
from tether.bench.simulator.faults import FAULT_KINDS, FaultKind, FaultModel
from tether.bench.simulator.server import SimulatorServer, create_app
from tether.bench.simulator.sessions import Decision, model_name, parse_model_name

__all__ = [
    "FAULT_KINDS",
    "Decision",
    "FaultKind",
    "FaultModel",
    "LatencyModel",
    "Simulator",
    "SimulatorServer",
    "UnknownSession",
    "create_app",
    "model_name",
    "parse_model_name",
]
