"""Everything ``tether bench`` is asked to do, as one validated object.

The command's flags fill a :class:`BenchOptions`; everything after parsing (loading scenarios,
building the backend spec, the run plan and the harness, running seeds, writing the report)
takes this one object, so a script can run the benchmark exactly as the command does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tether_bench.agents import VARIANTS
from tether_bench.harness import Harness

Protocol = Literal["react", "json_schema", "native"]


class BenchOptions(BaseModel):
    """One benchmark invocation. Defaults: the published run (docs/benchmark.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    agents: list[str] = Field(default_factory=lambda: list(VARIANTS))
    backend: str = "sim"
    scenarios: Path | None = Field(None, description="None: the scenarios shipped with tether.")
    tools: str = "demo"
    seeds: list[int] = Field(default_factory=lambda: [0, 1, 2], min_length=1)
    personas: list[str] = Field(default_factory=lambda: ["strong"], min_length=1)
    """sim: persona specs (a name or a .json/.toml file, then ``;trait=value`` overrides)."""
    concurrency: int = Field(4, ge=1)
    workers: int = Field(1, ge=1)
    trials: int = Field(1, ge=1)
    temperature: float = 0.7
    out: Path = Path("bench-out")
    model: str | None = None
    gguf: str | None = None
    protocol: Protocol | None = None
    api_key: str = "EMPTY"
    sample: int | None = Field(None, ge=1)
    simplest: int | None = Field(None, ge=1)
    """Only the N simplest scenarios (runner.simplest_scenarios)."""
    categories: list[str] = Field(default_factory=list)
    fault_rate: float | None = Field(None, ge=0, le=1)
    """sim: override the persona's fault rate."""
    fix_rate: float | None = Field(None, ge=0, le=1)
    """sim: override the persona's fix rate."""
    sim_latency: bool = True
    sensitivity: bool = False
    ablate: list[str] = Field(default_factory=list)
    """tether's controls to switch off, one tether variant each, beside the agents
    (:mod:`tether_bench.ablation`); a control not in force for an agent gets no variant."""
    max_tokens: int = Field(512, ge=1)
    timeout: float = Field(120.0, gt=0)
    local_parallel: int = Field(2, ge=1)
    step_cap: int = Field(Harness().step_cap, ge=1)
    token_budget: int = Field(Harness().token_budget, ge=1)
    progress: bool = True
    charts: bool = True

    @field_validator("personas")
    @classmethod
    def _known_personas(cls, specs: list[str]) -> list[str]:
        from tether_bench.simulator import persona_from_spec

        for spec in specs:
            persona_from_spec(spec)  # a ValueError names what is wrong
        return specs

    @field_validator("ablate")
    @classmethod
    def _known_controls(cls, names: list[str]) -> list[str]:
        from tether_bench.ablation import CONTROLS, unknown_controls

        unknown = unknown_controls(names)
        if unknown:
            raise ValueError(f"unknown controls {unknown}; known: {', '.join(CONTROLS)}")
        return list(dict.fromkeys(names))

    def harness(self) -> Harness:
        return Harness(step_cap=self.step_cap, token_budget=self.token_budget)
