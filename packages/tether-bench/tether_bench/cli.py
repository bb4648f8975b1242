"""``tether bench``: run the agents side by side on one backend and write the report.

The flags only fill a :class:`~tether_bench.options.BenchOptions`; :func:`run_bench` takes
that one object and does the rest. Mount either the command function,
``app.command("bench")(bench)``, or the Typer app, ``app.add_typer(bench_app, name="bench")``
(its callback is the command). ``python -m tether_bench`` runs it stand-alone.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from tether import TetherError
from tether_cli.group import fail, one_line

if TYPE_CHECKING:
    from tether_bench.options import BenchOptions

err = Console(stderr=True, highlight=False, soft_wrap=True)
DEFAULT_AGENTS = (
    "tether,agent_executor,agent_executor_stock,create_agent,create_agent_stock,create_agent_careful,"
    "create_agent_tether"
)


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


Opt = typer.Option


def bench(  # one line per flag; the flags only fill BenchOptions
    agents: Annotated[str, Opt(help="Comma-separated agent variants (or gold).")] = DEFAULT_AGENTS,
    backend: Annotated[str, Opt(help="sim, local (embedded llama.cpp) or a URL.")] = "sim",
    scenarios: Annotated[Path | None, Opt(help="Scenario JSONL; default: shipped.")] = None,
    tools: Annotated[
        str, Opt(help="Toolset: an installed name or a module with create_world.")
    ] = "demo",
    seeds: Annotated[str, Opt(help="Comma-separated seeds; mean and spread.")] = "0,1,2",
    personas: Annotated[
        str, Opt(help="sim: comma-separated personas: a name or a .json/.toml file, then ;k=v.")
    ] = "strong",
    trait: Annotated[
        list[str] | None, Opt("--set", help="sim: TRAIT=VALUE for every persona (repeatable).")
    ] = None,
    grid: Annotated[
        list[str] | None,
        Opt(help="sim: TRAIT=V1,V2,...: every persona at each value (repeatable: a grid)."),
    ] = None,
    trials: Annotated[int, Opt(min=1, help="Runs per scenario, agent and seed.")] = 1,
    sample: Annotated[int | None, Opt(min=1, help="Only N scenarios.")] = None,
    simplest: Annotated[
        int | None, Opt(min=1, help="Only the N simplest (2/3 one gold call, 1/3 two).")
    ] = None,
    category: Annotated[list[str] | None, Opt(help="Only these categories.")] = None,
    gguf: Annotated[str | None, Opt(help="local: GGUF file to serve.")] = None,
    protocol: Annotated[str | None, Opt(help="tether: react, json_schema or native.")] = None,
    model: Annotated[str | None, Opt(help="Model name on a URL backend.")] = None,
    api_key: Annotated[str, Opt(help="API key for a URL backend.")] = "EMPTY",
    temperature: Annotated[float, Opt(help="Sampling temperature, all agents.")] = 0.7,
    max_tokens: Annotated[int, Opt(min=1, help="Completion cap per model call.")] = 512,
    timeout: Annotated[float, Opt(help="Seconds before a model call fails.")] = 120.0,
    token_budget: Annotated[int | None, Opt(min=1, help="Tokens per run, all agents.")] = None,
    fault_rate: Annotated[
        float | None, Opt(min=0, max=1, help="sim: override the persona's.")
    ] = None,
    fix_rate: Annotated[
        float | None, Opt(min=0, max=1, help="sim: override the persona's.")
    ] = None,
    sensitivity: Annotated[bool, Opt(help="sim: also each fault kind off.")] = False,
    ablate: Annotated[
        bool, Opt(help="Also tether with each of its controls off in turn (tether-no_X).")
    ] = False,
    ablate_only: Annotated[
        str | None, Opt(help="Comma-separated controls to ablate (implies --ablate).")
    ] = None,
    sim_latency: Annotated[bool, Opt(help="sim: wait as the latency model says.")] = True,
    local_parallel: Annotated[int, Opt(min=1, help="local: llama.cpp slots.")] = 2,
    concurrency: Annotated[int, Opt(min=1, help="Runs in parallel (threads).")] = 4,
    workers: Annotated[int, Opt(min=1, help="Processes (see docs).")] = 1,
    out: Annotated[Path, Opt(help="Output directory.")] = Path("bench-out"),
    progress: Annotated[bool, Opt(help="Show a progress bar.")] = True,
    charts: Annotated[bool, Opt(help="Write PNG charts.")] = True,
    dry_run: Annotated[bool, Opt(help="Check the options, print the plan, run nothing.")] = False,
) -> None:
    """Benchmark agents side by side: same model, tools and harness, judged on the world."""
    command(dict(locals()))  # the flags, before any other local exists


def command(flags: dict[str, Any]) -> None:
    """Run, or with ``dry_run`` only plan, what the command's flags ask for."""
    from tether.extras import require

    require("bench", "tether bench", "langchain", "langchain_classic", "matplotlib", "tqdm")
    options = bench_options(flags)
    if flags["dry_run"]:
        plan_bench(options)
    else:
        run_bench(options, command=" ".join(["tether", "bench", *sys.argv[2:]]))


def bench_options(flags: dict[str, Any]) -> BenchOptions:
    """The flags as one validated BenchOptions; exit 2 with one line on a bad value."""
    from tether_bench.options import BenchOptions

    values = {name: value for name, value in flags.items() if name != "dry_run"}  # not an option
    values.update(
        agents=_split(values["agents"]),
        seeds=_split(values["seeds"]),
        personas=persona_specs(
            _split(values["personas"]), values.pop("trait") or [], values.pop("grid") or []
        ),
        categories=values.pop("category") or [],
        ablate=ablated(values.pop("ablate"), values.pop("ablate_only")),
    )
    if values["token_budget"] is None:
        del values["token_budget"]
    try:
        return BenchOptions.model_validate(values)
    except ValidationError as exc:
        fail(said(exc))


def said(exc: BaseException) -> str:
    """An error on one line; a validation error as its problems, not pydantic's dump."""
    if not isinstance(exc, ValidationError):
        return one_line(exc)
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"])
        problems.append(f"{where}: {error['msg'].removeprefix('Value error, ')}")
    return one_line(ValueError("; ".join(problems)))


def ablated(ablate: bool, only: str | None) -> list[str]:
    """The controls to switch off: those named, else every one with ``--ablate``."""
    from tether_bench.ablation import CONTROLS

    if only is not None:
        return _split(only)
    return list(CONTROLS) if ablate else []


def persona_specs(names: list[str], traits: list[str], grid: list[str]) -> list[str]:
    """Each persona with the ``--set`` overrides, then crossed with every ``--grid`` axis
    (``heed=0,0.5`` and ``stickiness=0.1,0.5`` give four cells per persona)."""
    specs = [";".join([name, *traits]) for name in names]
    for axis in grid:
        trait, sep, values = axis.partition("=")
        if not sep or not _split(values):
            raise typer.BadParameter(f"--grid takes TRAIT=V1,V2,..., not {axis!r}")
        specs = [f"{spec};{trait.strip()}={value}" for spec in specs for value in _split(values)]
    return specs


def run_bench(options: BenchOptions, command: str = "tether bench") -> None:
    """Run what ``options`` (a BenchOptions) asks for; print the tables; exit 2 on bad input.

    A run whose agents all fail is a result, not an error: it exits 0.
    """
    from tether_bench.ablation_report import ablation_markdown
    from tether_bench.scenarios import ScenarioFileError
    from tether_bench.suite import run_suite
    from tether_bench.suite_report import suite_markdown, write_suite

    try:
        _check_agents(options.agents)
        ablating = f", ablating {', '.join(options.ablate)}" if options.ablate else ""
        err.print(
            f"bench: {', '.join(options.agents)} on {options.backend}, seeds {options.seeds}, "
            f"personas {options.personas}{ablating}"
        )
        suite = run_suite(options)
        suite.info["command"] = command
        paths = write_suite(suite, options.out, with_charts=options.charts)
    except (TetherError, ScenarioFileError, ValueError) as exc:
        fail(said(exc))
    sys.stdout.write(suite_markdown(suite))
    if suite.ablation:
        sys.stdout.write("\nAblation (also in ablation.md):\n\n" + ablation_markdown(suite))
    err.print(f"wrote {len(paths)} files to {options.out} in {suite.wall_s:.1f} s of runs")


def plan_bench(options: BenchOptions) -> None:
    """What ``options`` would run, checked as a run checks it (agents, scenario file, personas,
    ablation), printed as one line; nothing is run or written."""
    from tether_bench.ablation import ablation_plan
    from tether_bench.scenarios import ScenarioFileError
    from tether_bench.suite import backend_spec, run_plan, select_scenarios

    try:
        _check_agents(options.agents)
        plan = run_plan(options, select_scenarios(options), ablation_plan(options))
        for persona in options.personas:
            for seed in options.seeds:
                backend_spec(options, seed, persona)
    except (TetherError, ScenarioFileError, ValueError) as exc:
        fail(said(exc))
    cells = len(options.personas) * len(options.seeds)
    runs = len(plan.agents) * len(plan.scenarios) * plan.trials * cells
    sys.stdout.write(
        f"would run {runs} runs: {len(plan.agents)} agents ({', '.join(plan.agents)}) x "
        f"{len(plan.scenarios)} scenarios x {plan.trials} trial(s) x {cells} (persona, seed) "
        f"on {options.backend}; nothing run\n"
    )


def _check_agents(names: list[str]) -> None:
    from tether_bench.agents import FACTORIES, known_agent

    unknown = [n for n in names if not known_agent(n)]
    if unknown or not names:
        raise TetherError(f"unknown agents {unknown}; known: {', '.join(FACTORIES)}")


bench_app = typer.Typer(help="Benchmark agents side by side.", add_completion=False)
bench_app.callback(invoke_without_command=True)(bench)
