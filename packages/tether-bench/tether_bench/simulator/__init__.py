"""A simulated model behind an OpenAI-compatible HTTP endpoint, acting on what it is shown.

It knows each scenario's plan but reads every request (messages, tools, response_format) the
way a model does: it uses only facts and tools the prompt shows, reads the errors after its
own faulty calls, may loop on repeated results, and answers from the facts it sees
(:mod:`.policy`). How often it errs, fixes and invents is a named persona
(:mod:`.personas`); its random numbers depend only on the seed, the scenario, the trial and
the turn (:mod:`.faults`), never on which agent is calling.
"""

from tether_bench.simulator.core import LatencyModel, Simulator, UnknownSession
from tether_bench.simulator.faults import FAULT_KINDS, FaultKind
from tether_bench.simulator.personas import (
    PERFECT,
    PERSONAS,
    STRONG,
    Persona,
    persona,
    persona_from_spec,
)
from tether_bench.simulator.server import SimulatorServer, create_app
from tether_bench.simulator.sessions import Decision, model_name, parse_model_name

__all__ = [
    "FAULT_KINDS",
    "PERFECT",
    "PERSONAS",
    "STRONG",
    "Decision",
    "FaultKind",
    "LatencyModel",
    "Persona",
    "Simulator",
    "SimulatorServer",
    "UnknownSession",
    "create_app",
    "model_name",
    "parse_model_name",
    "persona",
    "persona_from_spec",
]
