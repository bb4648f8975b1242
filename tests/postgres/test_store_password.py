"""A database password given to the CLI is never printed, and the command it prints works.

The suite's server trusts every local connection; here one role must give its password
(a scram-sha-256 line for it alone in the server's pg_hba.conf), so the printed command is
run as an operator would: it fails without the password, and works with PGPASSWORD.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tether_world.demo import SEED_FLOW_REPLIES, SEED_TASK

from tests.cli_helpers import hanging_model
from tests.contract.vllm_stub import RunningStub, StubConfig, closed_port, serve_stub
from tests.forker import run_tether

pytestmark = [pytest.mark.postgres, pytest.mark.slow, pytest.mark.timeout(600)]

TETHER = str(Path(sys.executable).parent / "tether")
ROLE, PASSWORD = "tether_pw", "s3cret-pw-4711"


@pytest.fixture(scope="session")
def password_role(pg_server: str) -> str:
    """A role that logs in with a password only (the others are still trusted)."""
    import psycopg

    with psycopg.connect(pg_server, autocommit=True) as conn:
        hba = Path(conn.execute("SHOW hba_file").fetchone()[0])  # type: ignore[index]
        rule = f"local all {ROLE} scram-sha-256\n"
        if rule not in hba.read_text():
            hba.write_text(rule + hba.read_text())  # the first matching line wins
            conn.execute(f"CREATE ROLE {ROLE} LOGIN PASSWORD '{PASSWORD}'")
            conn.execute("SELECT pg_reload_conf()")
    return ROLE


@pytest.fixture
def urls(pg_url: str, password_role: str) -> tuple[str, str]:
    """(the URL with the role's password, the same URL without it) for a fresh database."""
    import psycopg

    name = pg_url.split("/")[3].split("?")[0]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f'ALTER DATABASE "{name}" OWNER TO {password_role}')
    without = pg_url.replace("postgresql://postgres:@", f"postgresql://{password_role}@", 1)
    return without.replace("@", f":{PASSWORD}@", 1), without


@pytest.fixture
def stub() -> Iterator[RunningStub]:
    with serve_stub(StubConfig(script=list(SEED_FLOW_REPLIES))) as running:
        yield running


def tether(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("TETHER_", "PG"))}
    merged = clean | {"COLUMNS": "200", "NO_COLOR": "1"} | env
    return run_tether(list(args), env=merged, cwd=cwd, timeout=120)


def printed_command(stderr: str) -> list[str]:
    """The command a paused run says answers it, as the shell would split it."""
    said = " ".join(stderr.split())
    found = re.search(r"answer with: (.*?) --approve \(or", said)
    assert found, stderr
    return shlex.split(found.group(1))


def test_the_resume_command_never_shows_the_password_and_works_with_pgpassword(
    urls: tuple[str, str], stub: RunningStub, tmp_path: Path
) -> None:
    with_password, without = urls
    paused = tether(
        *("run", SEED_TASK, "--thread", "pw-1", "--store", with_password),
        *("--tools", "demo", "--world-db", with_password),
        *("--base-url", stub.base_url, "--protocol", "react", "--json"),
        cwd=tmp_path,
    )
    assert paused.returncode == 3, paused.stderr
    assert PASSWORD not in paused.stdout + paused.stderr
    command = printed_command(paused.stderr)
    assert command[command.index("--store") + 1] == without
    assert command[command.index("--world-db") + 1] == without
    said = " ".join(paused.stderr.split())
    assert "the password in --store and --world-db is not shown: give it in PGPASSWORD" in said

    refused = tether(*command[1:], "--approve", cwd=tmp_path)  # the operator's shell lacks it
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert "cannot open the database at" in refused.stderr

    done = tether(*command[1:], "--approve", "--json", cwd=tmp_path, PGPASSWORD=PASSWORD)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "completed"
    assert PASSWORD not in done.stdout + done.stderr


def test_ctrl_c_says_how_to_resume_without_the_password(
    urls: tuple[str, str], tmp_path: Path
) -> None:
    with_password, without = urls
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("TETHER_", "PG"))}
    with hanging_model() as base_url:
        child = subprocess.Popen(
            [TETHER, "run", "look it up", "--thread", "pw-3", "--store", with_password,
             "--base-url", base_url],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
            env=clean | {"COLUMNS": "200", "NO_COLOR": "1"},
        )  # fmt: skip
        try:
            assert base_url.asked.wait(60), "the run never called the model"
            child.send_signal(signal.SIGINT)
            out, err = child.communicate(timeout=60)
        finally:
            child.kill()
    assert child.returncode == 130, err
    assert PASSWORD not in out + err
    said = " ".join(err.split())
    assert f"resume with: tether run --thread pw-3 --store '{without}'" in said
    assert "(the password in --store is not shown: give it in PGPASSWORD" in said


def test_a_store_url_from_tether_store_is_left_out_of_the_command(
    urls: tuple[str, str], stub: RunningStub, tmp_path: Path
) -> None:
    with_password, _ = urls
    env = {"TETHER_STORE": with_password, "TETHER_WORLD_DB": with_password}
    paused = tether(
        *("run", SEED_TASK, "--thread", "pw-2", "--tools", "demo"),
        *("--base-url", stub.base_url, "--protocol", "react"),
        cwd=tmp_path,
        **env,
    )
    assert paused.returncode == 3, paused.stderr
    assert PASSWORD not in paused.stdout + paused.stderr
    command = printed_command(paused.stderr)
    assert "--store" not in command and "--world-db" not in command
    assert "not shown" not in paused.stderr  # nothing to say: the variables give the URLs

    for args in (["runs", "list"], ["runs", "show", "pw-2"], ["runs", "list", "--json"]):
        shown = tether(*args, cwd=tmp_path, **env)
        assert shown.returncode == 0 and "pw-2" in shown.stdout, shown.stderr
        assert PASSWORD not in shown.stdout + shown.stderr

    stub.config.script[:] = SEED_FLOW_REPLIES
    done = tether(*command[1:], "--approve", "--json", cwd=tmp_path, **env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "completed"


def test_a_password_given_as_a_url_parameter_is_not_printed_either(tmp_path: Path) -> None:
    down = f"postgresql://{ROLE}@127.0.0.1:{closed_port()}/tether?password={PASSWORD}"
    failed = tether("runs", "list", "--store", down, cwd=tmp_path)
    assert failed.returncode == 2, failed.stderr
    assert "cannot open the database at" in failed.stderr
    assert PASSWORD not in failed.stdout + failed.stderr
