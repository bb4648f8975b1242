"""Named, fixed parameter sets for the simulated model.

``strong`` is calibrated against the one real measurement there is (AgentExecutor on
Qwen2.5-7B-Instruct: 78% tool-call success, 5.7 steps on average, step cap 10), on
AgentExecutor alone; see docs/benchmark.md for the command and the result. The others
change one trait each from there, so a table per persona says which trait an agent's
controls pay off against. They are fixed here, before any agent is tuned on them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tether_bench.simulator.faults import FAULT_KINDS, FaultKind

Probability = float


def _weights(**overrides: float) -> dict[FaultKind, float]:
    weights: dict[FaultKind, float] = dict.fromkeys(FAULT_KINDS, 1.0)
    weights.update(overrides)  # type: ignore[arg-type]  # keys are checked by Persona
    return weights


class Persona(BaseModel):
    """How the simulated model behaves; every rate is a probability per turn."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    name: str = Field(min_length=1)
    """The persona's name, as ``--persona`` takes it."""

    fault_rate: Probability = Field(ge=0, le=1)
    """Chance that a turn which should act on the plan makes a fault instead."""

    fault_weights: dict[FaultKind, float] = Field(default_factory=_weights)
    """Relative weight of each fault kind among those that apply to the turn."""

    fix_rate: Probability = Field(ge=0, le=1)
    """Chance of fixing a faulty call when the error shown names what is wrong (the field,
    the tool, the JSON); otherwise the faulty reply is repeated."""

    blind_fix_rate: Probability = Field(ge=0, le=1)
    """Chance of fixing a faulty call when no error shown says what was wrong."""

    invent_rate: Probability = Field(ge=0, le=1)
    """Chance that a needed fact missing from the prompt is made up (a plausible, wrong
    value) instead of re-queried or asked for."""

    loop_rate: Probability = Field(ge=0, le=1)
    """Chance of calling the same tool again when the last two results shown are equal."""

    @field_validator("fault_weights")
    @classmethod
    def _known_weights(cls, value: dict[FaultKind, float]) -> dict[FaultKind, float]:
        if any(w < 0 for w in value.values()):
            raise ValueError("fault weights must be >= 0")
        return value

    def with_overrides(self, **values: Any) -> Persona:
        """This persona with some fields replaced (None leaves a field as it is)."""
        given = {k: v for k, v in values.items() if v is not None}
        return self if not given else Persona.model_validate({**self.model_dump(), **given})


STRONG = Persona(
    name="strong",
    fault_rate=0.35,
    fault_weights=_weights(repeat_previous=8.0),
    fix_rate=0.85,
    blind_fix_rate=0.3,
    invent_rate=0.1,
    loop_rate=0.1,
)
"""Calibrated on AgentExecutor alone (see the module docstring); a 7B model that re-checks a
lot (most of its slips are repeating a finished call) and rarely breaks the format."""
PERSONAS: dict[str, Persona] = {
    "strong": STRONG,
    "weak": STRONG.with_overrides(
        name="weak", fault_rate=0.5, fix_rate=0.5, blind_fix_rate=0.1, invent_rate=0.4
    ),
    "loopy": STRONG.with_overrides(
        name="loopy", loop_rate=0.8, fault_weights=_weights(repeat_previous=16.0)
    ),
    "sloppy": STRONG.with_overrides(
        name="sloppy",
        fault_weights=_weights(
            bad_json=4.0, missing_input=3.0, wrong_argument_name=2.0, repeat_previous=1.0
        ),
    ),
}
PERFECT = STRONG.with_overrides(name="perfect", fault_rate=0.0, invent_rate=0.0, loop_rate=0.0)
"""Makes no mistakes of its own: follows the plan whenever the prompt allows (for tests)."""


def persona(name: str) -> Persona:
    """The named persona, or a ValueError listing the names there are."""
    try:
        return PERSONAS[name]
    except KeyError:
        raise ValueError(f"unknown persona {name!r}; choose one of {sorted(PERSONAS)}") from None
