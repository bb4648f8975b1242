"""Several worker processes (``tests/fleet_worker.py``) sharing one PostgreSQL database: the
runs (checkpointer), the tool health (LangGraph's PostgresStore) and the payments ledger.

A run paused in one worker is approved and finished in another; a worker killed by SIGKILL in
the middle of a payment is resumed by another with one charge; an outage one worker met pauses
the tool for the next, which refuses without calling it, until a probe finds it back. After
each move, ``tether runs list`` says what the runs' last checkpoints say.
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.postgres import PostgresStore
from tether.dburl import libpq_url
from tether.nodes.health import NAMESPACE

from tests.forked import Worker
from tests.postgres.test_postgres import WAIT, new_payments, run_line, tether

pytestmark = [pytest.mark.postgres, pytest.mark.slow, pytest.mark.timeout(600)]


@pytest.fixture
def workers() -> Iterator[list[Worker]]:
    """Every worker started; each is killed (if still running) and reaped at the end."""
    started: list[Worker] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=WAIT)


def spawn(started: list[Worker], *args: str) -> Worker:
    process = Worker("tests.fleet_worker", *args)
    started.append(process)
    assert process.readline(timeout=WAIT).strip() == "ready"
    return process


def finished(started: list[Worker], *args: str) -> dict[str, Any]:
    """Run one worker to its end: what it printed about its run."""
    process = spawn(started, *args)
    out, err = process.communicate(timeout=WAIT)
    assert process.returncode == 0, err[-3000:]
    return dict(json.loads(out.strip().splitlines()[-1]))


def listed(pg_url: str, tmp_path: Path, thread: str) -> str:
    """The run's status column in ``tether runs list``, spawned like an operator would."""
    listing = tether("runs", "list", "--store", pg_url, cwd=tmp_path)
    assert listing.returncode == 0, listing.stderr
    cells = [cell.strip() for cell in run_line(listing.stdout, thread).split("│")]
    return cells[cells.index(thread) + 1]


def health_of(pg_url: str, tool: str) -> dict[str, Any]:
    with PostgresStore.from_conn_string(libpq_url(pg_url)) as store:
        item = store.get(NAMESPACE, tool)
    assert item is not None
    return dict(item.value)


def test_a_run_paused_in_one_worker_is_approved_and_finished_in_another(
    pg_url: str, tmp_path: Path, workers: list[Worker]
) -> None:
    first = finished(workers, pg_url, "start", "handoff")
    assert first["pending"] and first["payment_api_calls"] == 0
    assert listed(pg_url, tmp_path, "handoff") == "waiting (approval)"
    assert new_payments(pg_url) == []

    second = finished(workers, pg_url, "approve", "handoff")
    assert second["status"] == "completed", second["reason"]
    assert second["payment_api_calls"] == 1
    assert listed(pg_url, tmp_path, "handoff") == "completed"
    [payment] = new_payments(pg_url)
    assert payment["order_id"] == "ORD-2024-001"


def test_a_worker_killed_mid_payment_is_resumed_by_another_with_one_charge(
    pg_url: str, tmp_path: Path, workers: list[Worker]
) -> None:
    assert finished(workers, pg_url, "start", "killed")["pending"]
    paying = spawn(workers, pg_url, "approve", "killed", "stall")
    deadline = time.monotonic() + WAIT
    while not new_payments(pg_url):  # charged; its answer is held, so it is inside the call
        assert paying.poll() is None and time.monotonic() < deadline, "no charge was made"
        time.sleep(0.2)
    paying.send_signal(signal.SIGKILL)
    assert paying.wait(WAIT) == -signal.SIGKILL
    assert listed(pg_url, tmp_path, "killed") == "waiting (resume)"

    resumed = finished(workers, pg_url, "resume", "killed")
    assert resumed["status"] == "completed", resumed["reason"]
    assert resumed["pay_results"][-1]["meta"]["replayed"] is True  # same key: not charged again
    assert listed(pg_url, tmp_path, "killed") == "completed"
    assert len(new_payments(pg_url)) == 1


def test_an_outage_one_worker_met_pauses_the_tool_for_the_others(
    pg_url: str, tmp_path: Path, workers: list[Worker]
) -> None:
    down = finished(workers, pg_url, "run", "outage-a", "down")
    assert down["payment_api_calls"] >= 3 and down["status"] != "completed"
    assert health_of(pg_url, "pay_order")["state"] == "open"
    assert listed(pg_url, tmp_path, "outage-a") == down["status"]

    # Its payment API is healthy, but it must not call it: the tool is paused for everyone.
    paused = finished(workers, pg_url, "run", "outage-b", "healthy")
    assert paused["payment_api_calls"] == 0
    assert paused["pay_results"], "the run never proposed the payment"
    for result in paused["pay_results"]:
        assert result["meta"]["error_type"] == "refused"
    assert paused["pay_results"][0]["observation"].startswith(
        "pay_order is paused and was not called"
    )
    assert listed(pg_url, tmp_path, "outage-b") == paused["status"]
    assert new_payments(pg_url) == []

    # With the cool-down over (0 s for this run), its call is the probe: the API is back.
    probe = finished(workers, pg_url, "run", "outage-c", "healthy", "0")
    assert probe["status"] == "completed", probe["reason"]
    assert probe["payment_api_calls"] == 1
    assert health_of(pg_url, "pay_order")["state"] == "closed"
    assert listed(pg_url, tmp_path, "outage-c") == "completed"
    assert len(new_payments(pg_url)) == 1


def test_workers_that_start_at_once_all_set_up_the_stores(
    pg_url: str, workers: list[Worker]
) -> None:
    """The README's recipe in eight workers started together on an empty database: each
    creates the run store's and LangGraph's store tables, and none fails on another's."""
    started = [Worker("tests.fleet_worker", pg_url, "setup", f"w{i}") for i in range(8)]
    workers.extend(started)
    for process in started:
        out, err = process.communicate(timeout=WAIT)
        assert process.returncode == 0 and out.strip() == "ready", err[-3000:]
