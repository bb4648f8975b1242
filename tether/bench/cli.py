"""``tether bench``: run the agents side by side on one backend and write the report.

Mount either the command function, ``app.command("bench")(bench)``, or the Typer app,
``app.add_typer(bench_app, name="bench")`` (its callback is the command). ``python -m
tether.bench`` runs it stand-alone.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from tether.errors import TetherError

err = Console(stderr=True, highlight=False, soft_wrap=True)
DEFAULT_AGENTS = "tether,agent_executor,create_agent"
DEFAULT_SCENARIOS = Path("scenarios/bench.jsonl")


def bench(
    agents: Annotated[
        str, typer.Option(help="Comma-separated: tether, agent_executor, create_agent (gold).")
    ] = DEFAULT_AGENTS,
    backend: Annotated[
        str,
        typer.Option(help="sim (fault-injecting simulator), local (embedded SmolLM2) or a URL."),
    ] = "sim",
    scenarios: Annotated[
        Path, typer.Option(help="Scenario file (JSONL, see scenarios/schema.json).")
    ] = DEFAULT_SCENARIOS,
    tools: Annotated[
        str, typer.Option(help="Toolset module exposing create_world(data_dir).")
    ] = "tether.world",
    seed: Annotated[int, typer.Option(help="Seed of the simulator's faults and of sampling.")] = 0,
    concurrency: Annotated[int, typer.Option(min=1, help="Runs in parallel (threads).")] = 4,
    workers: Annotated[
        int, typer.Option(min=1, help="Processes, each with --concurrency threads (see docs).")
    ] = 1,
    trials: Annotated[
        int, typer.Option(min=1, help="Runs per scenario and agent; pass^k uses k = trials.")
    ] = 4,
    temperature: Annotated[float, typer.Option(help="Sampling temperature, all agents.")] = 0.7,
    out: Annotated[Path, typer.Option(help="Directory for results.json, results.md, PNGs.")] = Path(
        "bench-out"
    ),
    model: Annotated[
        str | None, typer.Option(help="Model name on a URL backend (default: tether's).")
    ] = None,
    api_key: Annotated[str, typer.Option(help="API key for a URL backend.")] = "EMPTY",
    sample: Annotated[
        int | None, typer.Option(min=1, help="Only N scenarios, spread over categories.")
    ] = None,
    category: Annotated[
        list[str] | None, typer.Option(help="Only these categories (repeatable).")
    ] = None,
    persona: Annotated[
        str, typer.Option(help="sim: the simulated model's persona (strong, weak, loopy, sloppy).")
    ] = "strong",
    fault_rate: Annotated[
        float | None, typer.Option(min=0, max=1, help="sim: override the persona's fault rate.")
    ] = None,
    fix_rate: Annotated[
        float | None, typer.Option(min=0, max=1, help="sim: override the persona's fix rate.")
    ] = None,
    sim_latency: Annotated[
        bool, typer.Option(help="sim: wait as the latency model says (off: answer at once).")
    ] = True,
    max_tokens: Annotated[int, typer.Option(min=1, help="Completion cap per model call.")] = 512,
    timeout: Annotated[float, typer.Option(help="Seconds before a model call fails.")] = 120.0,
    local_parallel: Annotated[
        int, typer.Option(min=1, help="local: llama.cpp slots (parallel requests).")
    ] = 2,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
    charts: Annotated[bool, typer.Option(help="Write PNG charts.")] = True,
) -> None:
    """Benchmark agents side by side: same model, same tools, judged on the world's state."""
    from tether.extras import require

    require("bench", "tether bench", "langchain", "langchain_classic", "matplotlib", "tqdm")
    from tether.bench.backends import BackendSpec
    from tether.bench.report import markdown, write_report
    from tether.bench.runner import RunPlan, run_in_processes, sample_scenarios
    from tether.bench.scenarios import ScenarioFileError, load_scenarios

    names = [a.strip() for a in agents.split(",") if a.strip()]
    try:
        loaded = load_scenarios(scenarios)
        if category:
            loaded = [s for s in loaded if s.category in set(category)]
        if sample is not None:
            loaded = sample_scenarios(loaded, sample, seed)
        if not loaded:
            raise TetherError("no scenarios left after filtering")
        spec = BackendSpec.parse(
            backend,
            seed=seed,
            persona=persona,
            fault_rate=fault_rate,
            fix_rate=fix_rate,
            sim_latency=sim_latency,
            model=model,
            local_parallel=local_parallel,
        )
        plan = RunPlan(
            agents=names,
            scenarios=loaded,
            toolset=tools,
            trials=trials,
            concurrency=concurrency,
            temperature=temperature,
            max_tokens=max_tokens,
            timeout=timeout,
            api_key=api_key,
            progress=progress,
        )
        _check_agents(names)
        err.print(
            f"bench: {len(names)} agent(s) x {len(loaded)} scenario(s) x {trials} trial(s) "
            f"on {backend}, concurrency {concurrency} x {workers} process(es), seed {seed}"
        )
        result = run_in_processes(plan, spec, workers)
        result.info["command"] = " ".join(["tether", "bench", *sys.argv[2:]])
        result.info["seed"] = seed
        paths = write_report(result, out, with_charts=charts)
    except (TetherError, ScenarioFileError, ValueError) as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from exc
    sys.stdout.write(markdown(result))
    err.print(f"wrote {', '.join(str(p) for p in paths)} in {result.wall_s:.1f} s")


def _check_agents(names: list[str]) -> None:
    from tether.bench.agents import FACTORIES

    unknown = [n for n in names if n not in FACTORIES]
    if unknown or not names:
        raise TetherError(f"unknown agents {unknown}; known: {', '.join(FACTORIES)}")


bench_app = typer.Typer(help="Benchmark agents side by side.", add_completion=False)
bench_app.callback(invoke_without_command=True)(bench)
