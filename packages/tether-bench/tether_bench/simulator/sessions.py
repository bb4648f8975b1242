"""One conversation of the simulated model (a session): its turns and what it remembers.

A session is one agent's run of one scenario trial, named by the model string the agent's
ChatOpenAI sends: ``sim:<scenario id>:<trial>:<session tag>``. The tag only keeps runs
apart; the simulator never looks at it. Between requests a session remembers only its own
last reply, its last two calls (a loop is a state of the run) and the lines of the last
prompt (so it can tell what is new, like an error message after its reply); everything else
it knows comes from the prompt in front of it.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from tether_bench.simulator.faults import FaultKind

MODEL_PREFIX = "sim"
TurnKind = Literal["action", "final"]
Move = Literal[
    "plan",
    "fix",
    "repeat",
    "loop",
    "requery",
    "invent",
    "ask",
    "no_tool",
    "answer",
    "fault",
    "forced",
    "constrained",
    "answer_tool",
]
Heard = Literal["none", "note", "pushback"]
"""What informative feedback the turn read: none, a note about its last call, or a note
after its final answer was sent back (:mod:`.relapse`)."""


def model_name(scenario_id: str, trial: int, tag: str) -> str:
    """The model string that routes a request to its session."""
    return f"{MODEL_PREFIX}:{scenario_id}:{trial}:{tag}"


def parse_model_name(name: str) -> tuple[str, int, str] | None:
    """(scenario id, trial, tag) from a session model string; None if it is not one."""
    parts = name.split(":")
    if len(parts) != 4 or parts[0] != MODEL_PREFIX or not parts[2].isdigit():
        return None
    return parts[1], int(parts[2]), parts[3]


@dataclass(frozen=True)
class Turn:
    """One reply, before it is rendered for the request's protocol."""

    kind: TurnKind
    thought: str
    tool: str | None = None
    arguments: dict[str, Any] | None = None
    answer: str | None = None
    fault: FaultKind | None = None
    intended_tool: str | None = None
    """For a faulty call: the tool the plan wanted (an error naming it names the problem)."""
    problem_field: str | None = None
    """For a dropped or misnamed argument: its right name."""
    shape: float = 0.0
    """Picks the variant of a format fault (curly quotes or a missing brace)."""


@dataclass(frozen=True)
class Decision:
    """The log line of one turn: what the model saw and did, to compare agents by."""

    index: int
    u_fault: float
    u_kind: float
    position: int
    planned: Literal["action", "final"]
    move: Move
    fault: FaultKind | None
    tool: str | None
    arguments: dict[str, Any] | None
    heard: Heard = "none"
    heeded: bool = False
    """It acted on what it heard (else it went on as if there were no note)."""
    prevented: FaultKind | None = None
    """The fault drawn for this turn that the request's constrained decoding ruled out."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def act(self) -> tuple[str, str | None, str, FaultKind | None]:
        """The decision without its turn index and draws: what two agents should share."""
        return (self.move, self.tool, repr(sorted((self.arguments or {}).items())), self.fault)


@dataclass(frozen=True)
class Memory:
    """What a session keeps from its previous request."""

    last_turn: Turn | None = None
    last_position: int = 0
    prompt_lines: frozenset[str] = frozenset()
    echo: tuple[str, ...] = ()
    """Pieces of its own last reply, so its own words are never read as new feedback."""
    calls: tuple[str, ...] = ()
    """The signatures of its last two well-formed calls, oldest first."""
    naming: frozenset[str] = frozenset()
    """The lines that said what was wrong with the faulty reply it last repeated."""


@dataclass
class Session:
    scenario_id: str
    trial: int
    calls: int = 0
    memory: Memory = field(default_factory=Memory)
    user_turn: int = 0
    """The conversation's message the session last answered (:mod:`.turns`)."""
    decisions: list[Decision] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
