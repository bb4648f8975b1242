"""The payment API over real HTTP (uvicorn on 127.0.0.1) and the world CLI."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from langchain_core.runnables import RunnableConfig
from tether_world import World
from tether_world import cli as world_cli
from tether_world.server import serve_in_thread
from tether_world.transport import InProcessTransport
from typer.testing import CliRunner

from tests.cli_helpers import TETHER, clean_env
from tests.world.helpers import ok


def test_tools_against_a_served_api(world: World, run: RunnableConfig) -> None:
    with serve_in_thread(world.payments_app()) as url:
        assert url.startswith("http://127.0.0.1:")
        assert httpx.get(f"{url}/health").json() == {"status": "ok"}
        registry = world.registry(payments_url=url, timeout=2)
        args = {"order_id": "ORD-2024-001", "amount": "2328.02"}
        payment = ok(registry.invoke("pay_order", args, run))
        assert registry.invoke("pay_order", args, run)["meta"]["replayed"] is True
        assert httpx.get(f"{url}/payments/{payment['id']}").json() == payment
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/health", timeout=0.5)


def test_cli_reset_and_hash(tmp_path: Path) -> None:
    runner = CliRunner()
    reset = runner.invoke(world_cli.world_app, ["reset", "--data-dir", str(tmp_path)])
    assert reset.exit_code == 0, reset.output
    hashed = runner.invoke(world_cli.world_app, ["hash", "--data-dir", str(tmp_path)])
    digest = hashed.output.strip()
    assert len(digest) == 64 and digest in reset.output
    with World.create(tmp_path) as world:
        world.registry().invoke("cancel_order", {"order_id": "ORD-2024-001"})
    changed = runner.invoke(world_cli.world_app, ["hash", "--data-dir", str(tmp_path)])
    assert changed.output.strip() != digest
    runner.invoke(world_cli.world_app, ["reset", "--data-dir", str(tmp_path)])
    again = runner.invoke(world_cli.world_app, ["hash", "--data-dir", str(tmp_path)])
    assert again.output.strip() == digest
    wrong = runner.invoke(world_cli.world_app, ["hash", "--data-dir", str(tmp_path), "--seed", "9"])
    assert wrong.exit_code == 2 and "seeded with seed 2024" in wrong.output


def test_cli_serve_passes_host_port_and_faults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    served: dict[str, Any] = {}

    def fake_run(app: Any, **options: Any) -> None:  # stands in for the blocking server
        served.update(options)
        transport = InProcessTransport(app)
        with httpx.Client(base_url="http://payments.test", transport=transport) as client:
            for attempt in ("first", "second"):
                served[attempt] = client.post(
                    "/payments",
                    json={"order_id": "ORD-2024-001", "amount": "2328.02"},
                    headers={"Idempotency-Key": "cli-serve-0001"},
                ).status_code
        transport.close()

    monkeypatch.setattr(uvicorn, "run", fake_run)  # the command imports uvicorn when it runs
    plan = tmp_path / "faults.json"
    plan.write_text(json.dumps({"api.create_payment": {"schedule": {"0": {"status": 503}}}}))
    result = CliRunner().invoke(
        world_cli.world_app,
        ["serve", "--port", "18999", "--data-dir", str(tmp_path), "--faults", str(plan)],
    )
    assert result.exit_code == 0, result.output
    assert (served["host"], served["port"]) == ("127.0.0.1", 18999)
    assert "http://127.0.0.1:18999" in result.output
    assert (served["first"], served["second"]) == (503, 201)  # the plan from the file applies


@pytest.mark.parametrize("port", ["70000", "65536", "0", "-1"])
def test_serve_refuses_a_port_outside_1_to_65535(tmp_path: Path, port: str) -> None:
    """70000 used to be taken modulo 65536 (port 4464); the command must refuse it instead."""
    done = subprocess.run(
        [TETHER, "world", "serve", "--port", port, "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        env=clean_env(),
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "--port" in lines[0], lines
    assert "Uvicorn running" not in done.stderr + done.stdout
