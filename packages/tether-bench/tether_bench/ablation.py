"""Ablations: tether with one of its controls switched off, beside tether in the same run.

:data:`CONTROLS` is the one table of what ``tether bench --ablate`` can switch off: each
control's name, the tether settings that switch it off, and what it does. A variant named
``tether-no_<control>`` is tether with exactly those overrides; it runs in the same suite
(same scenarios, seeds, personas and simulator draws) and shares tether's stable run ids, so
tether and the variant meet the same draws and the same tool ids run by run, and the pairs
(:mod:`tether_bench.paired`) say what the control changed. A control that is not in force for
the agent (the small-model profile on a server, calm temperature under the small-model
profile, which samples at 0) gets no variant: the report says it does not apply.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tether import AgentSettings, TetherError

if TYPE_CHECKING:
    from tether_bench.agents.tether_agent import TetherAgent
    from tether_bench.options import BenchOptions

NEVER = 1000
"""A failure streak no run reaches (the step cap is 10): the rule keyed to it never fires."""


class _RunTemperature:
    """An override value: the run's own sampling temperature (read when the run starts)."""

    def __repr__(self) -> str:
        return "temperature"


RUN_TEMPERATURE: Any = _RunTemperature()


def _always(_: AgentSettings) -> str | None:
    return None


def _profile_on(settings: AgentSettings) -> str | None:
    return None if settings.small_profile else "the small-model profile is off"


def _profile_off(settings: AgentSettings) -> str | None:
    if settings.small_profile:
        return "the small-model profile samples at temperature 0"
    return None


@dataclass(frozen=True)
class Control:
    """One control of tether's loop and the settings that switch it off."""

    overrides: Mapping[str, Any]
    """Setting -> value with the control off; :data:`RUN_TEMPERATURE` is the run's own."""
    what: str
    """What the control does, in one line."""
    skip: Callable[[AgentSettings], str | None] = field(default=_always, compare=False)
    """Why the control is not in force under these settings, or None when it is."""

    def off(self, settings: AgentSettings) -> dict[str, Any]:
        """The overrides for ``settings``, with the run's temperature filled in."""
        return {
            name: settings.temperature if value is RUN_TEMPERATURE else value
            for name, value in self.overrides.items()
        }

    def shown(self) -> str:
        """The overrides as ``setting=value`` text."""
        return ", ".join(f"{name}={value!r}" for name, value in self.overrides.items())


CONTROLS: dict[str, Control] = {
    "repeat_note": Control(
        {"repeat_notes": 0},
        "a successful call proposed again is answered from its record with a note naming it",
    ),
    "final_check": Control(
        {"check_final": False},
        "a final answer no result supports is sent back once with a note saying what is wrong",
    ),
    "look_first": Control(
        {"look_first": False},
        "until a tool has run, a task naming something a read tool can look up gets no answer "
        "offered",
    ),
    "cap_answer": Control(
        {"cap_answer": False},
        "at the step cap, token budget or breaker, one last call without tools asks for an answer",
    ),
    "breaker": Control(
        {"breaker_failures": NEVER},
        "consecutive failed steps open the circuit breaker and end the run (failed)",
    ),
    "switch_note": Control(
        {"switch_after_failures": NEVER},
        "after consecutive failures the model is told to use another tool or other arguments",
    ),
    "calm_temperature": Control(
        {"calm_temperature": RUN_TEMPERATURE},
        "after a run of successful steps the model samples at calm_temperature",
        skip=_profile_off,
    ),
    "output_repair": Control(
        {"repair_output": False},
        "a reply that breaks the format but has exactly one reading is read, not sent back",
    ),
    "small_model": Control(
        {"small_model": False},
        "the small-model profile: fewer tools, grounded ids, capped text, temperature 0",
        skip=_profile_on,
    ),
}
"""Every control ``--ablate`` can switch off, in the order the report lists them."""

PREFIX = "-no_"
"""A variant's name: the agent's, this, then the control's (``tether-no_breaker``)."""


def variant_name(base: str, control: str) -> str:
    return f"{base}{PREFIX}{control}"


def parse_variant(name: str) -> tuple[str, str] | None:
    """(agent, control) of an ablation variant's name; None if it is not one."""
    base, sep, control = name.rpartition(PREFIX)
    if not sep or not base or control not in CONTROLS:
        return None
    return base, control


def switch_off(settings: AgentSettings, controls: Sequence[str]) -> AgentSettings:
    """``settings`` with each of ``controls`` off (validated like any override)."""
    overrides: dict[str, Any] = {}
    for control in controls:
        overrides.update(CONTROLS[control].off(settings))
    return settings.with_overrides(overrides)


def unknown_controls(names: Sequence[str]) -> list[str]:
    return [name for name in names if name not in CONTROLS]


@dataclass(frozen=True)
class Ablation:
    """One control of one agent: the variant that runs without it, or why there is none."""

    agent: str
    control: str
    variant: str | None
    """The variant's name; None when the control is not in force for ``agent``."""
    reason: str | None = None
    """Why there is no variant."""


def ablations(agent: TetherAgent, controls: Sequence[str], temperature: float) -> list[Ablation]:
    """``controls`` of ``agent`` at this sampling temperature: a variant for each control in
    force whose overrides change a setting, a reason for each other."""
    settings = agent.settings_at(temperature=temperature)
    found = []
    for control in controls:
        reason = CONTROLS[control].skip(settings)
        off = CONTROLS[control].off(settings)
        if reason is None and all(getattr(settings, k) == v for k, v in off.items()):
            reason = "already off: " + ", ".join(f"{k}={v!r}" for k, v in off.items())
        variant = None if reason else variant_name(agent.name, control)
        found.append(Ablation(agent.name, control, variant, reason))
    return found


def ablation_plan(options: BenchOptions) -> list[Ablation]:
    """Every (tether agent, control) ``options`` asks to ablate, in agent then control order.

    The tether agents are those of ``options.agents`` that run tether's loop (``tether``,
    ``tether_small``); there must be one when any control is asked for."""
    from tether_bench.agents import make_agent
    from tether_bench.agents.tether_agent import TetherAgent

    if not options.ablate:
        return []
    bases = [
        agent
        for name in options.agents
        if parse_variant(name) is None
        and isinstance(agent := make_agent(name, options.harness(), options.protocol), TetherAgent)
    ]
    if not bases:
        raise TetherError(
            "--ablate switches tether's controls off: it needs tether (or tether_small) "
            "among --agents"
        )
    return [a for base in bases for a in ablations(base, options.ablate, options.temperature)]


__all__ = [
    "CONTROLS",
    "NEVER",
    "RUN_TEMPERATURE",
    "Ablation",
    "Control",
    "ablation_plan",
    "ablations",
    "parse_variant",
    "switch_off",
    "variant_name",
]
