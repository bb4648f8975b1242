"""Ablations: tether with each control off, beside tether in the same run, and the report."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
import typer
from tether import AgentSettings, TetherError
from tether_bench.ablation import CONTROLS, NEVER, Ablation, ablation_plan, parse_variant
from tether_bench.agents import known_agent, make_agent
from tether_bench.agents.tether_agent import TetherAgent
from tether_bench.cli import bench, bench_options
from tether_bench.options import BenchOptions
from tether_bench.suite import run_plan

ALL = list(CONTROLS)


def options(**flags: Any) -> BenchOptions:
    """The options the command would build from these flags (nothing runs)."""
    values = {name: p.default for name, p in inspect.signature(bench).parameters.items()}
    return bench_options({**values, **flags})


def test_every_control_is_switched_off_by_valid_settings() -> None:
    defaults = AgentSettings()
    for name, control in CONTROLS.items():
        off = control.off(defaults)
        assert set(off) <= set(AgentSettings.model_fields), name
        ablated = defaults.with_overrides(off)  # validated like any override
        for setting, value in off.items():
            assert getattr(ablated, setting) == value != getattr(defaults, setting), name
        assert control.what and "|" not in control.what, name  # one table cell
    assert CONTROLS["calm_temperature"].off(defaults) == {"calm_temperature": defaults.temperature}
    assert CONTROLS["breaker"].off(defaults) == {"breaker_failures": NEVER}
    assert defaults.max_steps < NEVER


def test_the_flag_adds_one_tether_variant_per_control_in_force() -> None:
    opts = options(ablate=True, agents="tether,agent_executor")
    assert opts.ablate == ALL
    plan = ablation_plan(opts)
    assert [(a.agent, a.control) for a in plan] == [("tether", c) for c in ALL]
    # on a server the small-model profile is off: nothing to switch off
    assert plan[-1] == Ablation("tether", "small_model", None, "the small-model profile is off")
    variants = [f"tether-no_{c}" for c in ALL if c != "small_model"]
    assert [a.variant for a in plan[:-1]] == variants
    scenarios = [object()]  # the plan only carries them
    assert run_plan(opts, scenarios, plan).agents == ["tether", "agent_executor", *variants]  # type: ignore[arg-type]
    assert run_plan(opts, scenarios).agents == ["tether", "agent_executor"]  # type: ignore[arg-type]


def test_a_variant_differs_from_tether_only_by_its_overrides() -> None:
    tether = make_agent("tether")
    assert isinstance(tether, TetherAgent)
    base = tether.settings_at(temperature=0.7, approval_tools=["pay_order"]).model_dump()
    for control in ALL[:-1]:
        variant = make_agent(f"tether-no_{control}")
        assert isinstance(variant, TetherAgent) and known_agent(variant.name)
        assert (variant.name, variant.run_name, variant.ablated) == (
            f"tether-no_{control}",
            "tether",  # the same run ids, so the same tool ids, as tether's runs
            (control,),
        )
        mine = variant.settings_at(temperature=0.7, approval_tools=["pay_order"]).model_dump()
        changed = {k: v for k, v in mine.items() if base[k] != v}
        expected = {k: 0.7 if k == "calm_temperature" else v for k, v in
                    CONTROLS[control].overrides.items()}  # fmt: skip
        assert changed == expected, control
    assert tether.run_name is None and tether.ablated == ()


def test_what_applies_depends_on_the_profile_and_the_temperature() -> None:
    opts = options(agents="tether,tether_small", ablate_only="small_model,calm_temperature")
    found = {(a.agent, a.control): (a.variant, a.reason) for a in ablation_plan(opts)}
    assert found == {
        ("tether", "small_model"): (None, "the small-model profile is off"),
        ("tether", "calm_temperature"): ("tether-no_calm_temperature", None),
        ("tether_small", "small_model"): ("tether_small-no_small_model", None),
        ("tether_small", "calm_temperature"): (
            None,
            "the small-model profile samples at temperature 0",
        ),
    }
    small = make_agent("tether_small-no_small_model")
    assert isinstance(small, TetherAgent) and not small.settings_at().small_profile
    assert small.run_name == "tether_small"
    # sampling at the calm temperature already: there is nothing to switch off
    calm = options(ablate_only="calm_temperature", agents="tether", temperature=0.1)
    assert ablation_plan(calm)[0].variant is None
    assert "already off" in str(ablation_plan(calm)[0].reason)


def test_bad_ablations_are_refused() -> None:
    with pytest.raises(typer.Exit):
        options(ablate_only="breaker,nope")
    with pytest.raises(TetherError, match="needs tether"):
        ablation_plan(options(ablate=True, agents="agent_executor"))
    assert ablation_plan(options(agents="tether")) == []
    assert parse_variant("tether-no_nope") is None
    assert not known_agent("agent_executor-no_breaker") and not known_agent("tether-no_nope")
    with pytest.raises(ValueError, match="unknown control"):
        TetherAgent().without("nope")
