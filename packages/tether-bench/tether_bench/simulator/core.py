"""The simulator's state: scenarios, sessions, the persona and the latency model.

Kept apart from the HTTP layer so tests and the runner can ask it directly for a reply to a
request body (:meth:`Simulator.reply`) and what a session did (:meth:`Simulator.decisions`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tether_bench.scenarios import Scenario
from tether_bench.simulator import answers
from tether_bench.simulator.faults import CALL_FAULTS, Draw, draw
from tether_bench.simulator.personas import STRONG, Persona
from tether_bench.simulator.policy import Choice, decide, progress
from tether_bench.simulator.reading import PromptView, read_request
from tether_bench.simulator.relapse import signature
from tether_bench.simulator.render import Reply, call_id, echo, render
from tether_bench.simulator.sessions import (
    Decision,
    Memory,
    Session,
    Turn,
    model_name,
    parse_model_name,
)
from tether_bench.simulator.turns import at_turn, latest_turn, unseen_work


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
    """Answers each request with the persona's policy over what the request shows."""

    def __init__(
        self,
        scenarios: Iterable[Scenario],
        *,
        seed: int = 0,
        persona: Persona | None = None,
        latency: LatencyModel | None = None,
    ) -> None:
        self.scenarios = {s.id: s for s in scenarios}
        self.seed = seed
        self.persona = persona or STRONG
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
            session = Session(scenario_id=parsed[0], trial=parsed[1])
            self._sessions[name] = session
            return session

    def reply(self, name: str, body: dict[str, Any]) -> Reply:
        """The next reply of session ``name`` to this request (temperature is ignored)."""
        session = self.session(name)
        whole = self.scenarios[session.scenario_id]
        known = {step.tool for step in whole.gold_actions}
        view = read_request(body, known)
        user_turn = latest_turn(whole, view)
        scenario = at_turn(whole, user_turn)
        stop = body.get("stop")
        stops = [stop] if isinstance(stop, str) else stop if isinstance(stop, list) else []
        stops = [s for s in stops if isinstance(s, str)]
        with session.lock:
            if user_turn != session.user_turn:  # a new message: its last reply was an answer
                session.memory, session.user_turn = Memory(), user_turn
            index = session.calls
            session.calls += 1
            turn_draw = draw(self.seed, scenario.id, session.trial, index)
            choice = _choose(whole, user_turn, view, session.memory, turn_draw, self.persona)
            turn = choice.turn
            session.memory = Memory(
                last_turn=turn,
                last_position=choice.position,
                prompt_lines=view.lines,
                echo=echo(turn),
                calls=_calls(session.memory.calls, turn),
                naming=choice.naming,
            )
            session.decisions.append(
                Decision(
                    index=index,
                    u_fault=turn_draw.u_fault,
                    u_kind=turn_draw.u_kind,
                    position=choice.position,
                    planned="action" if choice.position < len(scenario.gold_actions) else "final",
                    move=choice.move,
                    fault=turn.fault,
                    tool=turn.tool if turn.kind == "action" else None,
                    arguments=turn.arguments if turn.kind == "action" else None,
                    heard=choice.heard,
                    heeded=choice.heeded,
                    prevented=choice.prevented,
                )
            )
        return render(turn, protocol=view.protocol, call_id=call_id(name, index), stop=stops)

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


def _choose(
    whole: Scenario,
    user_turn: int,
    view: PromptView,
    memory: Memory,
    turn_draw: Draw,
    persona: Persona,
) -> Choice:
    """The policy's choice on the work the prompt shows (:mod:`.turns`); a question back to
    the user when some of it was asked for in a message the prompt no longer shows."""
    scenario = at_turn(whole, user_turn)
    position = progress(scenario.gold_actions, view)
    if unseen_work(whole, view, user_turn, position):
        turn = Turn(
            "final",
            answers.thought_for_answer(scenario),
            answer=answers.what_to_do(scenario, turn_draw.u_word),
        )
        return Choice(turn, "ask", position)
    return decide(scenario, view, memory, turn_draw, persona)


def _calls(calls: tuple[str, ...], turn: Turn) -> tuple[str, ...]:
    """The last two well-formed calls once ``turn`` is made (a garbled call is not one)."""
    if turn.kind != "action" or turn.fault in CALL_FAULTS:
        return calls
    return (*calls, signature(turn))[-2:]
