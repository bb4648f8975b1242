"""Drive the real ``tether`` command: spawned, under a pseudo-terminal, with a saved run."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tether import AgentSettings
from tether.agent import Agent
from tether.control.store import open_run_store
from tether.testing import ScriptedChatModel
from tether_world import World
from tether_world.demo import SEED_FLOW_REPLIES, SEED_TASK

from tests.forker import run_tether

TETHER = str(Path(sys.executable).parent / "tether")


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("TETHER_")}
    return {**env, "COLUMNS": "200", "NO_COLOR": "1", **extra}


def tether(
    *args: str, env: dict[str, str] | None = None, cwd: Path | str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``tether ARGS`` as its own process (forked from an interpreter that imported tether
    once: ``tests/forker.py``), stdin empty, stdout and stderr captured as text."""
    return run_tether(list(args), env=env or clean_env(), cwd=cwd, timeout=120)


# after the approved (or rejected) payment, step 3 hits the cap: no model is needed
LOCATE = ["--max-steps", "3"]
NO_MODEL = "http://127.0.0.1:9/v1"  # nothing listens there: a model call would fail the run
RESUMED = clean_env(TETHER_CAP_ANSWER="false", TETHER_BASE_URL=NO_MODEL)
"""A resumed seed-flow run ends at the step cap once the payment is settled; without the last
answer's call it needs no model. The model is a URL where nothing answers: the embedded one
would start (about a second) only to be left unused, and a call made after all would fail."""


def where(store: Path, world: Path) -> list[str]:
    return ["--store", str(store), "--tools", "demo", "--data-dir", str(world), *LOCATE]


def waiting_run(tmp: Path, thread: str = "pay-1") -> tuple[Path, Path]:
    """A saved seed-flow run paused before pay_order; returns (store path, world dir)."""
    store_path, world_dir = tmp / "runs.sqlite", tmp / "world"
    model = ScriptedChatModel(responses=list(SEED_FLOW_REPLIES[:3]))
    with World.create(world_dir) as world, open_run_store(store_path) as store:
        agent = Agent(AgentSettings(), store=store, registry=world.registry(), model=model)
        assert agent.run(SEED_TASK, thread_id=thread).pending is not None
    return store_path, world_dir


def payments(world_dir: Path) -> list[dict[str, Any]]:
    with World.create(world_dir) as world:
        return [p for p in world.payments() if p["order_id"] == "ORD-2024-001"]


def saved(store_path: Path, thread: str) -> Any:
    with open_run_store(store_path) as store:
        return Agent(AgentSettings(approval_tools=[]), store=store).status(thread)


class PtyProcess:
    """A child process whose stdin, stdout and stderr are a pseudo-terminal."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            args, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True
        )
        os.close(slave)
        self.output = ""

    def expect(self, text: str, timeout: float = 60) -> None:
        """Read until ``text`` has appeared (AssertionError with the output otherwise)."""
        deadline = time.monotonic() + timeout
        while text not in self.output:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"no {text!r} in:\n{self.output}"
            ready, _, _ = select.select([self.master], [], [], remaining)
            if ready:
                try:
                    chunk = os.read(self.master, 4096)
                except OSError:  # the child closed the terminal
                    chunk = b""
                assert chunk, f"process ended before {text!r}:\n{self.output}"
                self.output += chunk.decode("utf-8", "replace")

    def send(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def finish(self, timeout: float = 60) -> int:
        """Drain the output and wait for the exit code."""
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None or select.select([self.master], [], [], 0)[0]:
            assert time.monotonic() < deadline, self.output
            if select.select([self.master], [], [], 0.1)[0]:
                try:
                    chunk = os.read(self.master, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                self.output += chunk.decode("utf-8", "replace")
        os.close(self.master)
        return self.proc.wait(timeout=timeout)


class _Hang(BaseHTTPRequestHandler):
    """A model endpoint that never answers a chat completion (other paths: 404)."""

    def do_POST(self) -> None:
        if self.path.endswith("/chat/completions"):
            self.server.asked.set()  # type: ignore[attr-defined]
            self.server.release.wait(60)  # type: ignore[attr-defined]
        self.send_error(404)

    do_GET = do_POST

    def log_message(self, *args: Any) -> None:
        pass


class HangingModel(str):
    """A hanging model server's base URL; ``asked`` is set once a chat completion came in."""

    asked: threading.Event


@contextmanager
def hanging_model() -> Iterator[HangingModel]:
    """The base URL of a model server that hangs: a run stays inside its model call."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hang)
    server.release = threading.Event()  # type: ignore[attr-defined]
    url = HangingModel(f"http://127.0.0.1:{server.server_address[1]}/v1")
    url.asked = server.asked = threading.Event()  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield url
    finally:
        server.release.set()  # type: ignore[attr-defined]
        server.shutdown()
        server.server_close()
