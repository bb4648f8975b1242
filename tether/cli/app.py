"""The tether command: run an agent on a task, resume and inspect saved runs, the demo world."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from tether.bench.cli import bench
from tether.cli.runs import runs_app
from tether.console import TracePrinter
from tether.errors import TetherError
from tether.world.cli import world_app

app = typer.Typer(help="Run tool-calling agents under control.", no_args_is_help=True)
app.add_typer(runs_app, name="runs", help="Saved runs: list, show, cancel.")
app.add_typer(world_app, name="world", help="The demo world: orders, payments, calculators.")
app.command("bench")(bench)
err = Console(stderr=True, highlight=False)

EXIT_COMPLETED, EXIT_STOPPED, EXIT_ERROR, EXIT_WAITING = 0, 1, 2, 3


@app.command()
def run(
    task: Annotated[str | None, typer.Argument(help="What the agent should do.")] = None,
    thread: Annotated[
        str | None, typer.Option(help="Thread id: names a new run, or resumes a saved one.")
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", help="Approve every gated call.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    tools: Annotated[
        str, typer.Option(help="Module that provides the tools (README: toolsets).")
    ] = "tether.world",
    data_dir: Annotated[
        Path | None, typer.Option(help="Where the toolset keeps its data (default ./data).")
    ] = None,
    store: Annotated[
        str | None,
        typer.Option(envvar="TETHER_STORE", help="Run store: SQLite path or postgres:// URL."),
    ] = None,
    world_db: Annotated[
        str | None,
        typer.Option(
            envvar="TETHER_WORLD_DB", help="The toolset's database URL (e.g. postgres://...)."
        ),
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible endpoint; default: embedded model.")
    ] = None,
    model: Annotated[str | None, typer.Option(help="Model name on the server.")] = None,
    protocol: Annotated[str | None, typer.Option(help="react, json_schema or native.")] = None,
    max_iters: Annotated[int | None, typer.Option(help="Step cap.")] = None,
    token_budget: Annotated[int | None, typer.Option(help="Token budget.")] = None,
) -> None:
    """Run the agent on TASK (or resume --thread) and print each step as it happens."""
    from tether.agent import Agent
    from tether.control.store import open_run_store
    from tether.settings import load_settings
    from tether.toolsets import load_toolset

    endpoint = {"base_url": base_url, "model": model, "protocol": protocol}
    limits = {"max_iters": max_iters, "token_budget": token_budget}
    try:
        settings = load_settings(**{k: v for k, v in {**endpoint, **limits}.items() if v})
        with open_run_store(store) as run_store:
            toolset = load_toolset(tools, data_dir, world_db)
            agent = Agent(settings, store=run_store, registry=toolset.registry())
            printer = None if as_json else TracePrinter()
            context = {k: v for k, v in limits.items() if v} or None
            if task is not None:
                result = agent.run(task, thread_id=thread, context=context, observer=printer)
            elif thread is not None:
                result = agent.resume(thread, context=context, observer=printer)
            else:
                raise TetherError("give a TASK, or --thread ID to resume a saved run")
            while result.pending is not None:
                answer = _answer(result.pending, agent, yes)
                if answer is None:
                    err.print(
                        f"[yellow]waiting for approval:[/yellow] run saved as thread "
                        f"{result.thread_id}; resume with: tether run --thread "
                        f"{result.thread_id} (add --yes to approve)"
                    )
                    raise typer.Exit(EXIT_WAITING)
                result = agent.resume(result.thread_id, answer, observer=printer)
    except (TetherError, ValueError) as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(EXIT_ERROR) from exc
    if not as_json:
        err.print(f"[dim]saved as thread {result.thread_id} (tether runs show {result.thread_id})")
    finish(result.state, as_json)


def _answer(pending: Any, agent: Any, yes: bool) -> Any:
    from tether.cli.approval_prompt import ask, can_ask

    if yes:
        return "approve"
    if not can_ask():
        return None
    return ask(pending, agent.registry, err)


@app.command()
def demo(
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """The design note's flow with a SCRIPTED model (no model server): query, discount, pay."""
    from tether.graph.builder import build_graph
    from tether.settings import AgentSettings
    from tether.testing import ScriptedChatModel
    from tether.world import World
    from tether.world.demo import SEED_FLOW_REPLIES, SEED_TASK

    err.print("[yellow]scripted demo:[/yellow] replies come from a script, not a model")
    with World.temporary() as world:
        model = ScriptedChatModel(responses=list(SEED_FLOW_REPLIES))
        # No run store here, so nothing can pause: the scripted payment runs unapproved.
        settings = AgentSettings(approval_tools=[])
        graph = build_graph(settings, model=model, registry=world.registry())
        printer = None if as_json else TracePrinter()
        final: dict[str, Any] = {}
        chunks: Any = graph.stream({"task": SEED_TASK}, stream_mode=["updates", "values"])
        for mode, chunk in chunks:
            if mode == "values":
                final = chunk
            elif printer:
                printer.update(chunk)
    finish(final, as_json)


def finish(final: dict[str, Any], as_json: bool) -> None:
    """Print the JSON result if asked; exit 0 only for a completed run."""
    if as_json:
        sys.stdout.write(json.dumps(result_view(final), ensure_ascii=False, indent=2) + "\n")
    raise typer.Exit(EXIT_COMPLETED if final.get("status") == "completed" else EXIT_STOPPED)


def result_view(state: dict[str, Any]) -> dict[str, Any]:
    """The parts of a final state a script wants (no rendered prompt)."""
    keys = ("status", "reason", "answer", "steps", "usage", "run_id", "task")
    view = {key: state.get(key) for key in keys}
    view["reasoning_buffer"] = state.get("reasoning_buffer", [])
    view["tool_buffer"] = state.get("tool_buffer", [])
    view["trace"] = state.get("trace", [])
    return json.loads(json.dumps(view, ensure_ascii=False, default=str))


@app.command()
def graph() -> None:
    """Print the loop's graph as a Mermaid diagram."""
    from tether.graph.diagram import mermaid

    sys.stdout.write(mermaid() + "\n")
