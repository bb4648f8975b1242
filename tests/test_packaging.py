"""A lean core import, one-line errors for missing extras, and the code's shape.

Each import check runs in a fresh interpreter, since this one has long since imported
everything. An extra is made "missing" by putting None in sys.modules for its packages, which
is what the import system reports for a package that is not installed. The shape checks
(sizes, import cycles, private imports) read the source with ``ast`` and import nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

slow = pytest.mark.slow  # the tests that start a fresh interpreter

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
    "tether_bench",
    "tether_world",
    "tether_cli",
    "langchain.agents",
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


@slow
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
    "local": (
        "tether_local",
        "from tether.llm import make_chat_model; from tether import AgentSettings\n"
        "make_chat_model(AgentSettings())",
    ),
    "local ": (
        "xllamacpp",
        "from tether.llm import make_chat_model; from tether import AgentSettings\n"
        "make_chat_model(AgentSettings())",
    ),
    "local  ": (  # the small-model profile on a model passed in: tether-local holds it
        "tether_local",
        "from tether import AgentSettings, build_graph\n"
        "from tether.testing import ScriptedChatModel\n"
        "model = ScriptedChatModel(responses=['x'])\n"
        "build_graph(AgentSettings(small_model=True), model=model).invoke({'task': 't'})",
    ),
    "sqlite": (
        "langgraph.checkpoint.sqlite",
        "from tether.control import open_run_store; open_run_store('x.sqlite')",
    ),
    "postgres": (
        "psycopg",
        "from tether.control import open_run_store; open_run_store('postgres://u@127.0.0.1:1/db')",
    ),
}


@slow
def test_a_missing_extra_is_one_line_naming_the_install_command() -> None:
    """Each case blocks one package of an extra and records what using the extra says."""
    done = python(
        f"""
        import json, sys
        said = {{}}
        for case, (blocked, code) in {MISSING!r}.items():
            saved = sys.modules.get(blocked)
            sys.modules[blocked] = None
            try:
                exec(code)
            except Exception as exc:
                said[case] = [type(exc).__name__, str(exc)]
            else:
                said[case] = ["no error", ""]
            if saved is None:
                del sys.modules[blocked]
            else:
                sys.modules[blocked] = saved
        print(json.dumps(said))
        """
    )
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    assert set(said) == set(MISSING)
    for case, (kind, message) in said.items():
        assert kind == "MissingExtraError", (case, kind, message)
        assert len(message.splitlines()) == 1
        assert message.endswith(f"pip install 'tether[{case.strip()}]'")


@slow
@pytest.mark.parametrize(
    "argv", [["--help"], ["run", "--help"], ["run", "--max-steps", "many", "a task"]]
)
def test_help_and_a_bad_argument_load_no_langgraph(argv: list[str]) -> None:
    # LangGraph and LangChain are most of a start's time (about 2 s here): a command loads
    # them to run, not to print its help or refuse its arguments.
    done = python(
        f"""
        import json, sys
        sys.argv = ["tether", *{argv!r}]
        from tether_cli.entry import main
        try:
            main()
        except SystemExit as exit:
            code = exit.code
        loaded = [m for m in ("langgraph", "langchain_core") if m in sys.modules]
        print(json.dumps({{"code": code, "loaded": loaded}}))
        """
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["code"] in (0, 2)
    assert result["loaded"] == []


@slow
def test_the_studio_graphs_open_no_database_when_imported() -> None:
    done = python(
        """
        import json, sys
        import tether.studio, tether_world.studio
        print(json.dumps([m for m in ("sqlalchemy", "tether_world.world") if m in sys.modules]))
        """
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
