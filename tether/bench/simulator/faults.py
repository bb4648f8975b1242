"""The simulator's fault model: which mistake, if any, the simulated model makes on a turn.

Every turn draws two numbers from a generator seeded by (seed, scenario, trial, call index)
alone, so the draws are the same for every agent and for any temperature:

* ``u_fault`` decides *whether* the turn is faulty. After a turn that moved the plan forward
  (and on the first turn) the fault probability is ``fault_rate``; after a turn that did not
  (an error observation, a rejected reply, a repeated call) it is ``1 - recovery``: the model
  gets back on the plan with probability ``recovery``.
* ``u_kind`` picks *which* fault, by weight, among the faults that make sense for the turn
  (a turn that should answer cannot "answer prematurely"; the first turn has nothing to repeat).

Nothing else is random, so an agent can only earn a better score by handling faults better.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

FaultKind = Literal[
    "chinese_quotes",
    "missing_argument",
    "malformed_json",
    "unknown_tool",
    "repeat_previous",
    "repeated_thought",
    "premature_final",
]
FAULT_KINDS: tuple[FaultKind, ...] = (
    "chinese_quotes",
    "missing_argument",
    "malformed_json",
    "unknown_tool",
    "repeat_previous",
    "repeated_thought",
    "premature_final",
)
ACTION_FAULTS: frozenset[str] = frozenset(
    {"chinese_quotes", "missing_argument", "malformed_json", "unknown_tool"}
)
"""Faults that garble the planned call itself (only possible when a call is planned)."""

DEFAULT_FAULT_RATE = 0.2
DEFAULT_RECOVERY = 0.7


@dataclass(frozen=True)
class FaultModel:
    """How often the simulated model errs, and how it recovers; see the module docstring."""

    fault_rate: float = DEFAULT_FAULT_RATE
    recovery: float = DEFAULT_RECOVERY
    weights: Mapping[FaultKind, float] = field(
        default_factory=lambda: dict.fromkeys(FAULT_KINDS, 1.0)
    )

    def __post_init__(self) -> None:
        if not 0 <= self.fault_rate <= 1 or not 0 <= self.recovery <= 1:
            raise ValueError("fault_rate and recovery are probabilities (0 to 1)")
        unknown = set(self.weights) - set(FAULT_KINDS)
        if unknown or any(w < 0 for w in self.weights.values()):
            raise ValueError(f"fault weights must be >= 0 for known faults; unknown {unknown}")

    @classmethod
    def none(cls) -> FaultModel:
        """A model that never errs: plays the gold plan exactly."""
        return cls(fault_rate=0.0, recovery=1.0)


@dataclass(frozen=True)
class Draw:
    """The two uniform numbers of one turn."""

    u_fault: float
    u_kind: float


def draw(seed: int, scenario_id: str, trial: int, index: int) -> Draw:
    """The turn's numbers: a pure function of its key (sha256, not Python's salted hash)."""
    digest = hashlib.sha256(f"{seed}\x1f{scenario_id}\x1f{trial}\x1f{index}".encode()).digest()
    scale = float(1 << 64)
    return Draw(
        u_fault=int.from_bytes(digest[:8], "big") / scale,
        u_kind=int.from_bytes(digest[8:16], "big") / scale,
    )


def applicable_faults(
    *, planned_call: bool, has_previous: bool, has_arguments: bool
) -> list[FaultKind]:
    """The faults that make sense when the plan's next step is a call (or the final answer)."""
    kinds: list[FaultKind] = []
    for kind in FAULT_KINDS:
        if kind in ACTION_FAULTS and not planned_call:
            continue
        if kind == "missing_argument" and not has_arguments:
            continue
        if kind == "repeat_previous" and not has_previous:
            continue
        if kind == "premature_final" and not planned_call:
            continue
        kinds.append(kind)
    return kinds


def decide(
    model: FaultModel, turn: Draw, *, stalled: bool, applicable: Sequence[FaultKind]
) -> FaultKind | None:
    """The turn's fault, or None to follow the plan."""
    threshold = (1.0 - model.recovery) if stalled else model.fault_rate
    if turn.u_fault >= threshold:
        return None
    kinds = [k for k in applicable if model.weights.get(k, 0.0) > 0]
    if not kinds:
        return None
    total = sum(model.weights[k] for k in kinds)
    point = turn.u_kind * total
    for kind in kinds:
        point -= model.weights[kind]
        if point < 0:
            return kind
    return kinds[-1]
