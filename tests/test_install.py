"""The packages as a user installs them: the core wheel alone, and the CLI without the world.

The wheels are built from this checkout and installed into a fresh virtual environment with
the locked versions of their dependencies; the ``tether`` command is then run from there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tests.contract.vllm_stub import RunningStub, StubConfig, serve_stub

pytestmark = pytest.mark.slow

ROOT = Path(__file__).parent.parent
CORE = ROOT / "packages" / "tether"
TOOLSET = '''
from tether import ToolRegistry, tool


@tool
def lookup(key: str) -> str:
    """The value stored under a key."""
    return {"a": "apple"}.get(key, "nothing")


class Shelf:
    def registry(self) -> ToolRegistry:
        registry = ToolRegistry()
        registry.register(lookup)
        return registry

    def close(self) -> None:
        pass


def create_world(data_dir=None):
    return Shelf()
'''


def uv() -> list[str]:
    found = shutil.which("uv")
    return [found] if found else ["python3", "-m", "uv"]


def run(*args: str, **kw: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([*args], capture_output=True, text=True, timeout=300, check=False, **kw)  # type: ignore[call-overload]
    assert done.returncode == 0, done.stderr
    return done  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("wheels")
    for package in ("tether", "tether-cli"):
        run(
            *uv(),
            "build",
            "--wheel",
            "--quiet",
            "--out-dir",
            str(out),
            str(ROOT / "packages" / package),
        )
    return {w.name.split("-")[0]: w for w in out.glob("*.whl")}


@pytest.fixture(scope="module")
def venv(wheels: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtual environment with the core and the CLI, and neither the world nor the bench."""
    where = tmp_path_factory.mktemp("install")
    locked, env = where / "constraints.txt", where / "venv"
    run(
        *uv(),
        "export",
        "--frozen",
        "--no-hashes",
        "--no-emit-workspace",
        "--quiet",
        "--all-packages",
        "-o",
        str(locked),
        cwd=ROOT,
    )
    python = env / "bin" / "python"
    run(*uv(), "venv", "--quiet", "--python", sys.executable, str(env))
    run(
        *uv(),
        "pip",
        "install",
        "--quiet",
        "--python",
        str(python),
        "-c",
        str(locked),
        f"tether[sqlite] @ {wheels['tether'].as_uri()}",
        str(wheels["tether_cli"]),
    )
    return env


def test_the_core_wheel_holds_only_the_loop(wheels: dict[str, Path]) -> None:
    names = zipfile.ZipFile(wheels["tether"]).namelist()
    tops = {name.split("/")[0] for name in names}
    assert tops == {"tether", "tether-0.1.0.dist-info"}
    assert any(name == "tether/graph/builder.py" for name in names)


def test_the_core_wheel_requires_only_what_the_core_needs(wheels: dict[str, Path]) -> None:
    metadata = zipfile.ZipFile(wheels["tether"]).read("tether-0.1.0.dist-info/METADATA").decode()
    required = [
        Requirement(line.split(":", 1)[1])
        for line in metadata.splitlines()
        if line.startswith("Requires-Dist:")
    ]
    always = {r.name for r in required if r.marker is None}
    declared = tomllib.loads((CORE / "pyproject.toml").read_text())["project"]["dependencies"]
    assert always == {Requirement(d).name for d in declared}
    assert not always & {
        "typer",
        "rich",
        "sqlalchemy",
        "starlette",
        "uvicorn",
        "langchain",
        "langchain-classic",
        "matplotlib",
        "xllamacpp",
        "tqdm",
    }


def tether_in(venv: Path, *args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("TETHER_", "PYTHON"))}
    return subprocess.run(
        [str(venv / "bin" / "tether"), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env={**clean, "COLUMNS": "200", "NO_COLOR": "1", **env},
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_without_the_world_the_command_has_no_world_commands(venv: Path, tmp_path: Path) -> None:
    done = tether_in(venv, "--help", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    commands = {
        line.split()[0] for line in done.stdout.split("Commands:")[1].splitlines() if line.strip()
    }
    assert commands == {"run", "runs", "graph", "toolsets"}
    assert tether_in(venv, "toolsets", cwd=tmp_path).stdout == "no toolset installed\n"
    missing = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import tether_world"],
        capture_output=True,
        check=False,
    )
    assert missing.returncode != 0


def test_a_toolset_that_is_not_installed_is_one_line(venv: Path, tmp_path: Path) -> None:
    done = tether_in(venv, "run", "--tools", "demo", "a task", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and "'demo'" in done.stderr
    assert "none installed" in done.stderr and len(done.stderr.splitlines()) == 1


@pytest.fixture
def stub() -> Iterator[RunningStub]:
    with serve_stub(StubConfig()) as running:
        yield running


def run_json(venv: Path, tmp: Path, stub: RunningStub, *args: str) -> dict:
    done = tether_in(
        venv,
        "run",
        "--json",
        "--base-url",
        stub.base_url,
        "--protocol",
        "react",
        "--store",
        str(tmp / "runs.sqlite"),
        *args,
        cwd=tmp,
        PYTHONPATH=str(tmp),
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_tether_run_with_no_toolset(venv: Path, tmp_path: Path, stub: RunningStub) -> None:
    stub.config.script = ["Thought: I know this.\nFinal Answer: Paris"]
    result = run_json(venv, tmp_path, stub, "What is the capital of France?")
    assert (result["status"], result["answer"], result["tool_buffer"]) == ("completed", "Paris", [])
    assert result["cause"] == "answer"


def test_tether_run_with_a_toolset_module(venv: Path, tmp_path: Path, stub: RunningStub) -> None:
    (tmp_path / "shelf.py").write_text(TOOLSET, encoding="utf-8")
    stub.config.script = [
        'Thought: look it up\nAction: lookup\nAction Input: {"key": "a"}',
        "Thought: found it\nFinal Answer: apple",
    ]
    result = run_json(venv, tmp_path, stub, "--tools", "shelf", "What is under a?")
    assert (result["status"], result["answer"]) == ("completed", "apple")
    assert [entry["tool"] for entry in result["tool_buffer"]] == ["lookup"]
