"""The run store and the world on a real PostgreSQL server, driven through the spawned CLI.

The model is the vLLM-shaped stub on 127.0.0.1 replaying the seed flow (query, discount,
pay, answer); its gate holds one model call so another process can act mid-run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from tether.control.store import open_run_store
from tether_world import World
from tether_world.demo import SEED_FLOW_REPLIES, SEED_TASK

from tests.contract.vllm_stub import Gate, RunningStub, StubConfig, closed_port, serve_stub
from tests.forker import run_tether

# Each test spawns the CLI several times; the bound is for a hung process on a loaded machine.
pytestmark = [pytest.mark.postgres, pytest.mark.slow, pytest.mark.timeout(600)]

TETHER = str(Path(sys.executable).parent / "tether")
WAIT = 120  # seconds; a bound for a hung process, never a speed assertion


@pytest.fixture
def stub() -> Iterator[RunningStub]:
    with serve_stub(StubConfig(script=list(SEED_FLOW_REPLIES))) as running:
        yield running


def tether(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_")}
    env |= {"TETHER_DATA_DIR": str(cwd / "data"), "COLUMNS": "200", "NO_COLOR": "1"}
    return run_tether(list(args), env=env, cwd=cwd, timeout=WAIT)


def spawn(*args: str, cwd: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_")}
    env |= {"TETHER_DATA_DIR": str(cwd / "data"), "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.Popen(
        [TETHER, *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def agent_args(thread: str, pg_url: str, stub: RunningStub) -> list[str]:
    """`tether run` on the seed task, with the run store and the world both on PostgreSQL."""
    return [
        *("run", SEED_TASK, "--thread", thread, "--store", pg_url),
        *("--tools", "demo", "--world-db", pg_url),
        *("--base-url", stub.base_url, "--protocol", "react"),
    ]


def new_payments(pg_url: str) -> list[dict]:
    """Payments in the PostgreSQL world beyond the seeded ledger."""
    with World.temporary() as seeded, World.create(url=pg_url) as world:
        known = {p["id"] for p in seeded.payments()}
        return [p for p in world.payments() if p["id"] not in known]


def run_line(listing: str, thread: str) -> str:
    lines = [line for line in listing.splitlines() if thread in line]
    assert len(lines) == 1, listing
    return lines[0]


def test_postgres_and_postgresql_urls_reach_the_same_store_and_world(pg_url: str) -> None:
    short = pg_url.replace("postgresql://", "postgres://", 1)
    with open_run_store(short) as one:
        one.cancels.request("t-1", "from the postgres:// store")
    with open_run_store(pg_url) as other:
        assert other.cancels.requested("t-1") == "from the postgres:// store"
    with World.temporary() as on_sqlite:
        seeded = on_sqlite.snapshot_hash()
    with World.create(url=short) as world:
        assert world.engine.dialect.name == "postgresql"
        assert world.snapshot_hash() == seeded  # the same seeded world, now on PostgreSQL
    with World.create(url=pg_url) as same:
        assert same.snapshot_hash() == seeded


def test_an_unreachable_server_is_one_line_and_exit_2(tmp_path: Path) -> None:
    down = f"postgresql://postgres@127.0.0.1:{closed_port()}/tether"
    for args in (
        ["runs", "list", "--store", down],
        [
            "run",
            "a task",
            "--tools",
            "demo",
            "--world-db",
            down.replace("postgresql", "postgres", 1),
        ],
    ):
        done = tether(*args, cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, done.stderr
        assert lines[0].startswith("error: cannot open the database at postgres")
        assert "Traceback" not in done.stderr + done.stdout


def test_pause_for_approval_list_and_approve_on_postgres(
    pg_url: str, stub: RunningStub, tmp_path: Path
) -> None:
    paused = tether(*agent_args("pg-pause", pg_url, stub), cwd=tmp_path)
    assert paused.returncode == 3, paused.stderr  # waiting for approval, nobody to ask
    assert "waiting for approval" in paused.stderr
    assert new_payments(pg_url) == []  # the gated payment has not run

    listing = tether("runs", "list", "--store", pg_url, cwd=tmp_path)
    assert listing.returncode == 0, listing.stderr
    assert "waiting (approval)" in run_line(listing.stdout, "pg-pause")

    stub.config.script[:] = SEED_FLOW_REPLIES
    approved = tether(*agent_args("pg-yes", pg_url, stub), "--yes", "--json", cwd=tmp_path)
    assert approved.returncode == 0, approved.stderr
    assert json.loads(approved.stdout)["status"] == "completed"
    [payment] = new_payments(pg_url)
    assert (payment["order_id"], Decimal(str(payment["amount"]))) == (
        "ORD-2024-001",
        Decimal("2328.02"),
    )


def test_cancel_from_another_process_on_postgres(
    pg_url: str, stub: RunningStub, tmp_path: Path
) -> None:
    stub.config.gate = Gate(at=2)  # hold the second model call
    running = spawn(*agent_args("pg-cancel", pg_url, stub), "--yes", cwd=tmp_path)
    try:
        assert stub.config.gate.arrived.wait(WAIT), "the run never reached its second call"
        cancel = tether(
            *("runs", "cancel", "pg-cancel", "--store", pg_url, "--reason", "operator test"),
            cwd=tmp_path,
        )
        assert cancel.returncode == 0, cancel.stderr
        stub.config.gate.release.set()
        assert running.wait(WAIT) == 1  # stopped, not completed
    finally:
        running.kill()
        running.communicate()
    shown = tether("runs", "show", "pg-cancel", "--store", pg_url, cwd=tmp_path)
    detail = json.loads(shown.stdout)
    assert detail["status"] == "cancelled"
    assert "operator test" in detail["reason"]
    assert new_payments(pg_url) == []  # stopped before the payment step


def test_resume_on_postgres_after_the_process_was_killed(
    pg_url: str, stub: RunningStub, tmp_path: Path
) -> None:
    stub.config.gate = Gate(at=2)  # never released: the process dies waiting for the model
    running = spawn(*agent_args("pg-resume", pg_url, stub), "--yes", cwd=tmp_path)
    try:
        assert stub.config.gate.arrived.wait(WAIT), "the run never reached its second call"
    finally:
        running.kill()
        running.communicate()
    listing = tether("runs", "list", "--store", pg_url, cwd=tmp_path)
    assert "waiting (resume)" in run_line(listing.stdout, "pg-resume")

    stub.config.gate = None
    resume = [
        *("run", "--thread", "pg-resume", "--store", pg_url),
        *("--tools", "demo", "--world-db", pg_url),
        *("--base-url", stub.base_url, "--protocol", "react", "--yes", "--json"),
    ]
    resumed = tether(*resume, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    result = json.loads(resumed.stdout)
    assert result["status"] == "completed"
    assert result["steps"] == len(SEED_FLOW_REPLIES)  # step 1 was not run again
    [payment] = new_payments(pg_url)
    assert payment["order_id"] == "ORD-2024-001"
