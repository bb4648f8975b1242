"""``tether world ...``: serve the payment API, reset the world, print its state hash."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tether_world.seed_data import DEFAULT_SEED

if TYPE_CHECKING:
    from tether_world.world import World

world_app = typer.Typer(
    help="The demo world: orders database, payment API and calculation tools.",
    no_args_is_help=True,
)

DataDir = Annotated[
    Path | None,
    typer.Option(
        "--data-dir",
        help="Directory of the world's database (default: $TETHER_DATA_DIR or ./data).",
    ),
]
Url = Annotated[
    str | None,
    typer.Option(
        "--url",
        envvar="TETHER_WORLD_DB",
        help="Database URL (SQLite or postgres://) instead of a data directory.",
    ),
]
Seed = Annotated[int, typer.Option("--seed", help="Seed of the generated data.")]


@world_app.command()
def serve(
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[  # bounded: the socket layer would take 70000 modulo 65536 (port 4464)
        int, typer.Option(min=1, max=65535, help="Port to listen on (1-65535).")
    ] = 8765,
    data_dir: DataDir = None,
    url: Url = None,
    seed: Seed = DEFAULT_SEED,
    faults: Annotated[
        Path | None,
        typer.Option(
            help="JSON fault plan by target, e.g. "
            '{"api.create_payment": {"schedule": {"0": {"status": 503}}}}.'
        ),
    ] = None,
) -> None:
    """Serve the payment API for agents running elsewhere."""
    _check_listen(host, port)
    world = _open(data_dir, url, seed)
    try:
        if faults is not None:
            world.set_faults(json.loads(faults.read_text(encoding="utf-8")))
        import uvicorn

        typer.echo(f"payment API for {world.engine.url!r} on http://{host}:{port}")
        uvicorn.run(world.payments_app(), host=host, port=port, log_level="info")
    finally:
        world.close()


def _check_listen(host: str, port: int) -> None:
    """Refuse, as a bad --host (exit 2), an address the server could not listen on: the
    server itself would exit 3, which is tether's code for a saved run that waits. An empty
    host would listen on every interface; that must be asked for (0.0.0.0), not fallen into.
    """
    if not host.strip():
        raise typer.BadParameter(
            "cannot be empty (give 0.0.0.0 to listen on every interface)", param_hint="'--host'"
        )
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as exc:
        why = exc.strerror or str(exc)
        raise typer.BadParameter(f"cannot listen on it: {why}", param_hint="'--host'") from None


@world_app.command()
def reset(data_dir: DataDir = None, url: Url = None, seed: Seed = DEFAULT_SEED) -> None:
    """Return the world to its seeded state (orders, stock and payments)."""
    with _open(data_dir, url, seed, fresh=True) as world:
        typer.echo(f"reset {world.engine.url!r}; snapshot {world.snapshot_hash()}")


@world_app.command("hash")
def hash_(data_dir: DataDir = None, url: Url = None, seed: Seed = DEFAULT_SEED) -> None:
    """Print the world's snapshot hash (compare it with a reference run's)."""
    with _open(data_dir, url, seed) as world:
        typer.echo(world.snapshot_hash())


def _open(data_dir: Path | None, url: str | None, seed: int, *, fresh: bool = False) -> World:
    from tether import TetherError

    from tether_world import World

    try:
        return World.create(data_dir, url=url, seed=seed, fresh=fresh)
    except (TetherError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


def demo(
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """The design note's flow with a SCRIPTED model (no model server): query, discount, pay."""
    from tether import build_graph, load_settings
    from tether.testing import ScriptedChatModel
    from tether_cli.console import TracePrinter
    from tether_cli.output import finish

    from tether_world.demo import SEED_FLOW_REPLIES, SEED_TASK
    from tether_world.world import World

    typer.secho("scripted demo: replies come from a script, not a model", fg="yellow", err=True)
    with World.temporary() as world:
        model = ScriptedChatModel(responses=list(SEED_FLOW_REPLIES))
        # No run store here, so nothing can pause: the scripted payment runs unapproved. The
        # replies are ReAct text: a TETHER_PROTOCOL or TETHER_BASE_URL in the environment
        # (which picks json_schema) must not make the script unreadable.
        settings = load_settings(approval_tools=[], protocol="react")
        graph = build_graph(settings, model=model, registry=world.registry())
        printer = None if as_json else TracePrinter()
        final: dict[str, Any] = {}
        trace: list[Any] = []
        chunks: Any = graph.stream({"task": SEED_TASK}, stream_mode=["custom", "values"])
        for mode, chunk in chunks:
            if mode == "values":
                final = chunk
            else:
                trace.append(chunk)
                if printer:
                    printer.event(chunk)
    finish(final, as_json, trace)
