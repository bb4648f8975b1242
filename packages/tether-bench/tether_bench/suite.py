"""A benchmark over several seeds and personas (and, on request, each fault kind switched off).

One :class:`~tether_bench.runner.BenchResult` per (persona, seed), plus one per fault kind for
the sensitivity table (first persona, first seed). The report aggregates them: mean and spread
over seeds, per category, per persona, per fault kind. With ``--ablate`` every (persona, seed)
also runs tether with each control off in turn (:mod:`tether_bench.ablation`), beside the
agents in the same plan, so each variant meets the same scenarios and draws as tether.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from tether import TetherError

from tether_bench.ablation import CONTROLS, Ablation, ablation_plan
from tether_bench.backends import BackendSpec
from tether_bench.options import BenchOptions
from tether_bench.runner import (
    BenchResult,
    RunPlan,
    run_in_processes,
    sample_scenarios,
    simplest_scenarios,
)
from tether_bench.scenarios import SCENARIO_PATH, Scenario, load_scenarios
from tether_bench.simulator import FAULT_KINDS


@dataclass
class SuiteResult:
    """Every run of the suite, keyed by what varied."""

    options: BenchOptions
    by_seed: dict[tuple[str, int], BenchResult]
    """(persona, seed) -> result."""
    without: dict[str, BenchResult] = field(default_factory=dict)
    """Fault kind switched off -> result (the sensitivity runs)."""
    info: dict[str, Any] = field(default_factory=dict)
    ablation: list[Ablation] = field(default_factory=list)
    """Each (tether agent, control) ablated: its variant ran in every (persona, seed)."""

    @property
    def wall_s(self) -> float:
        runs = [*self.by_seed.values(), *self.without.values()]
        return sum(r.wall_s for r in runs)


def select_scenarios(options: BenchOptions) -> list[Scenario]:
    """The scenario file (shipped by default), filtered by category, the simplest kept, and
    sampled."""
    loaded = load_scenarios(options.scenarios or SCENARIO_PATH)
    if options.categories:
        loaded = [s for s in loaded if s.category in set(options.categories)]
    if options.simplest is not None:
        loaded = simplest_scenarios(loaded, options.simplest)
    if options.sample is not None:
        loaded = sample_scenarios(loaded, options.sample, options.seeds[0])
    if not loaded:
        raise TetherError("no scenarios left after filtering")
    return loaded


def backend_spec(options: BenchOptions, seed: int, persona: str) -> BackendSpec:
    return BackendSpec.parse(
        options.backend,
        seed=seed,
        fault_rate=options.fault_rate,
        fix_rate=options.fix_rate,
        sim_latency=options.sim_latency,
        model=options.model,
        local_parallel=options.local_parallel,
        gguf=options.gguf,
        persona=persona,
    )


def run_plan(
    options: BenchOptions, scenarios: list[Scenario], ablation: Sequence[Ablation] = ()
) -> RunPlan:
    """The plan of one (persona, seed): the agents, then the ablation's variants."""
    variants = [a.variant for a in ablation if a.variant is not None]
    return RunPlan(
        agents=[*options.agents, *(v for v in variants if v not in options.agents)],
        scenarios=scenarios,
        toolset=options.tools,
        trials=options.trials,
        concurrency=options.concurrency,
        temperature=options.temperature,
        max_tokens=options.max_tokens,
        timeout=options.timeout,
        api_key=options.api_key,
        progress=options.progress,
        harness=options.harness(),
        protocol=options.protocol,
    )


Runner = Callable[[RunPlan, BackendSpec, int], BenchResult]


def run_suite(options: BenchOptions, runner: Runner = run_in_processes) -> SuiteResult:
    """Every (persona, seed), with the ablation's variants when asked, then the sensitivity
    runs when asked (simulator only; the agents alone)."""
    ablation = ablation_plan(options)
    scenarios = select_scenarios(options)
    plan = run_plan(options, scenarios, ablation)
    by_seed = {
        (persona, seed): runner(plan, backend_spec(options, seed, persona), options.workers)
        for persona in options.personas
        for seed in options.seeds
    }
    suite = SuiteResult(options=options, by_seed=by_seed, ablation=ablation)
    if ablation:
        suite.info["ablated"] = {
            a.variant: CONTROLS[a.control].shown() for a in ablation if a.variant is not None
        }
    if options.sensitivity:
        if options.backend != "sim":
            raise TetherError("--sensitivity switches simulator faults off: it needs --backend sim")
        base = backend_spec(options, options.seeds[0], options.personas[0])
        agents_only = run_plan(options, scenarios)
        for kind in FAULT_KINDS:
            spec = replace(base, disabled_faults=(kind,))
            suite.without[kind] = runner(agents_only, spec, options.workers)
    return suite
