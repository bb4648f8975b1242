"""What the tether command says and does can be trusted: an own toolset either runs or says
why not."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import clean_env, tether
from tests.contract.vllm_stub import StubConfig, serve_stub

pytestmark = pytest.mark.slow  # spawns the command
FINAL = "Thought: done\nFinal Answer: ok"


OWN_TOOLSETS = {
    "mine": "from tether import ToolRegistry\n\n\nclass Mine:\n"
    "    def registry(self):\n        return ToolRegistry()\n\n"
    "    def close(self):\n        pass\n\n\n"
    "def create_world(data_dir):\n    open('given', 'w').write(str(data_dir))\n    return Mine()\n",
    "raises": "def create_world(data_dir):\n    raise RuntimeError('no\\ndatabase')\n",
    "gives_none": "def create_world(data_dir):\n    return None\n",
    "exits": "import sys\n\n\ndef create_world(data_dir):\n    sys.exit(0)\n",
}


@pytest.fixture(scope="module")
def own_toolsets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding toolset modules, as a user's project would."""
    here = tmp_path_factory.mktemp("project")
    for name, source in OWN_TOOLSETS.items():
        (here / f"{name}.py").write_text(source)
    return here


def test_an_own_toolset_in_the_current_directory_runs_with_the_default_data_dir(
    own_toolsets: Path,
) -> None:
    """It was not importable by the tether script; given, it got data_dir None."""
    with serve_stub(StubConfig(script=[FINAL, FINAL])) as stub:
        done = tether("run", "say ok", "--tools", "mine", "--base-url", stub.base_url,
                      "--protocol", "react", "--store", "runs.sqlite",
                      cwd=own_toolsets)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (own_toolsets / "given").read_text() == "data"


@pytest.mark.parametrize(
    ("module", "said"),
    [
        ("raises", "toolset 'raises' failed to start: RuntimeError: no database"),
        ("gives_none", "toolset 'gives_none' gave NoneType, not a toolset"),
        ("exits", "toolset 'exits' failed to start: SystemExit: 0"),  # was exit 0, nothing run
    ],
)
def test_a_toolset_that_fails_to_start_is_one_line_and_exit_2(
    own_toolsets: Path, module: str, said: str
) -> None:
    env = clean_env(PYTHONPATH=str(own_toolsets))  # importable whatever the directory
    done = tether(
        "run", "t", "--tools", module, "--store", "runs.sqlite", env=env, cwd=own_toolsets
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and said in done.stderr, done.stderr
