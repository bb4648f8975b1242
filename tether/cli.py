"""The tether command: run an agent on a task, show the graph, manage the demo world."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from tether.console import TracePrinter
from tether.errors import TetherError
from tether.settings import load_settings
from tether.toolsets import load_toolset
from tether.world.cli import world_app

app = typer.Typer(help="Run tool-calling agents under control.", no_args_is_help=True)
app.add_typer(world_app, name="world", help="The demo world: orders, payments, calculators.")
err = Console(stderr=True, highlight=False)


@app.command()
def run(
    task: Annotated[str, typer.Argument(help="What the agent should do.")],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the final result as JSON.")
    ] = False,
    tools: Annotated[
        str, typer.Option(help="Module that provides the tools (see README: toolsets).")
    ] = "tether.world",
    data_dir: Annotated[
        Path | None, typer.Option(help="Where the toolset keeps its data (default ./data).")
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible endpoint; default: embedded model.")
    ] = None,
    model: Annotated[str | None, typer.Option(help="Model name on the server.")] = None,
    protocol: Annotated[str | None, typer.Option(help="react, json_schema or native.")] = None,
    max_iters: Annotated[int | None, typer.Option(help="Step cap.")] = None,
    token_budget: Annotated[int | None, typer.Option(help="Token budget.")] = None,
) -> None:
    """Run the agent on TASK and print each step as it happens."""
    from tether.graph.builder import build_graph

    overrides = {
        key: value
        for key, value in {
            "base_url": base_url,
            "model": model,
            "protocol": protocol,
            "max_iters": max_iters,
            "token_budget": token_budget,
        }.items()
        if value is not None
    }
    try:
        settings = load_settings(**overrides)
        toolset = load_toolset(tools, data_dir)
        graph = build_graph(settings, registry=toolset.registry())
        final = stream_run(graph, task, None if as_json else TracePrinter())
    except (TetherError, ValueError) as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from exc
    finish(final, as_json)


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
        graph = build_graph(AgentSettings(), model=model, registry=world.registry())
        final = stream_run(graph, SEED_TASK, None if as_json else TracePrinter())
    finish(final, as_json)


def stream_run(graph: Any, task: str, printer: TracePrinter | None) -> dict[str, Any]:
    """Run ``task``, printing trace events as nodes finish; return the final state."""
    final: dict[str, Any] = {}
    chunks: Any = graph.stream({"task": task}, stream_mode=["updates", "values"])
    for mode, chunk in chunks:
        if mode == "values":
            final = chunk
        elif printer:
            for update in chunk.values():
                for event in (update or {}).get("trace", []):
                    printer.event(event)
    return final


def finish(final: dict[str, Any], as_json: bool) -> None:
    """Print the JSON result if asked; exit 0 only for a completed run."""
    if as_json:
        sys.stdout.write(json.dumps(result_view(final), ensure_ascii=False, indent=2) + "\n")
    raise typer.Exit(0 if final.get("status") == "completed" else 1)


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


def main() -> None:  # pragma: no cover - console entry point
    app()
