"""The simulator's state: scenarios, sessions, the fault model and the latency model.

Kept apart from the HTTP layer so tests and the runner can ask it directly what a session
did (:meth:`Simulator.decisions`) and feed it tool results (:meth:`Simulator.listener`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass

from tether.bench.instrument import ToolListener
from tether.bench.records import ToolCall
from tether.bench.scenarios import Scenario
from tether.bench.simulator.faults import FaultModel
from tether.bench.simulator.render import Reply, call_id, render
from tether.bench.simulator.sessions import Decision, Session, model_name, parse_model_name


@dataclass(frozen=True)
class LatencyModel:
    """Seconds a reply takes: fixed + per prompt token (prefill) + per output token (decode).

    The defaults are a scaled-down GPU server (a 2,000-token prompt and a 50-token reply take
    about 0.08 s), so latency tracks what an agent sends and asks for, and a full benchmark
    still runs in minutes. They model no particular hardware.
    """

    base_s: float = 0.01
    per_prompt_token_s: float = 0.00001
    per_output_token_s: float = 0.001

    def seconds(self, prompt_tokens: int, output_tokens: int) -> float:
        return (
            self.base_s
            + prompt_tokens * self.per_prompt_token_s
            + output_tokens * self.per_output_token_s
        )

    @classmethod
    def instant(cls) -> LatencyModel:
        return cls(0.0, 0.0, 0.0)


class UnknownSession(LookupError):
    """A model name that names no scenario this simulator plays."""


class Simulator:
    """Plays each scenario's gold plan, with the faults the fault model draws."""

    def __init__(
        self,
        scenarios: Iterable[Scenario],
        *,
        seed: int = 0,
        faults: FaultModel | None = None,
        latency: LatencyModel | None = None,
    ) -> None:
        self.scenarios = {s.id: s for s in scenarios}
        self.seed = seed
        self.faults = faults or FaultModel()
        self.latency = latency or LatencyModel()
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def model_name(self, scenario_id: str, trial: int, tag: str) -> str:
        return model_name(scenario_id, trial, tag)

    def session(self, name: str) -> Session:
        """The session a model name routes to, created on first use."""
        with self._lock:
            session = self._sessions.get(name)
            if session is not None:
                return session
            parsed = parse_model_name(name)
            if parsed is None or parsed[0] not in self.scenarios:
                raise UnknownSession(
                    f"model {name!r} is not a simulator session; use "
                    "sim:<scenario id>:<trial>:<tag> with a scenario this simulator loaded"
                )
            session = Session(scenario=self.scenarios[parsed[0]], trial=parsed[1])
            self._sessions[name] = session
            return session

    def listener(self, name: str) -> ToolListener:
        """What the recording registry calls with each tool result of this session."""
        session = self.session(name)

        def hear(call: ToolCall) -> None:
            session.observe(call)

        return hear

    def reply(self, name: str, *, tools_mode: bool, stop: list[str] | None = None) -> Reply:
        """The next reply of session ``name`` (temperature and the rest are ignored)."""
        session = self.session(name)
        turn = session.next_turn(self.seed, self.faults)
        return render(turn, tools_mode=tools_mode, call_id=call_id(name, session.calls), stop=stop)

    def decisions(self, name: str) -> list[Decision]:
        with self._lock:
            session = self._sessions.get(name)
        if session is None:
            return []
        with session.lock:
            return list(session.decisions)

    def forget(self, name: str) -> None:
        """Drop a finished session (keeps memory flat over long runs)."""
        with self._lock:
            self._sessions.pop(name, None)
