"""What the tether command says and does can be trusted: a resume stays on the run's model,
a script learns which thread it saved, and an own toolset either runs or says why not."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from tether import load_settings
from tether.control.store import open_run_store
from tether_cli.endpoint import Endpoint, remembered, resumed
from tether_cli.run_options import RunOptions
from tether_world.demo import SEED_FLOW_REPLIES, SEED_TASK

from tests.cli_helpers import NO_MODEL, clean_env, payments, saved, tether
from tests.contract.vllm_stub import StubConfig, serve_stub

pytestmark = pytest.mark.slow  # spawns the command
FINAL = "Thought: done\nFinal Answer: ok"


def test_a_resume_goes_on_with_the_model_the_run_was_saved_with(tmp_path: Path) -> None:
    """The printed command left the endpoint out, so the resume went on the embedded model
    (or whatever TETHER_BASE_URL said). The run now remembers it, never the API key."""
    store, world = tmp_path / "runs.sqlite", tmp_path / "world"
    located = ["--thread", "pay-1", "--store", str(store), "--data-dir", str(world)]
    with serve_stub(StubConfig(script=list(SEED_FLOW_REPLIES))) as stub:
        args = ["run", SEED_TASK, *located, "--tools", "demo", "--json"]
        paused = tether(*args, "--base-url", stub.base_url, "--protocol", "react",
                        env=clean_env(TETHER_API_KEY="sk-secret-key"))  # fmt: skip
        assert paused.returncode == 3, paused.stderr
        said = " ".join(paused.stderr.split())
        assert f"--base-url {stub.base_url} --model Qwen2.5-7B-Instruct --protocol react" in said
        assert json.loads(paused.stdout)["thread"] == "pay-1"
        assert b"sk-secret-key" not in store.read_bytes()

        moved = tether("run", *located, "--approve", "--model", "other")
        assert moved.returncode == 2 and moved.stderr.count("\n") == 1, moved.stderr
        assert "--model other would change it (add --switch-model" in moved.stderr
        assert saved(store, "pay-1").pending is not None and payments(world) == []

        # every flag left out, and the environment pointing elsewhere: the saved endpoint
        done = tether("run", *located, "--approve", "--json",
                      env=clean_env(TETHER_BASE_URL=NO_MODEL))  # fmt: skip
    assert done.returncode == 0, done.stderr
    view = json.loads(done.stdout)
    assert (view["thread"], view["status"], view["pending"]) == ("pay-1", "completed", None)
    assert len(payments(world)) == 1


def test_switch_model_takes_the_new_endpoint_and_remembers_it(tmp_path: Path) -> None:
    saved_on = Endpoint("http://a:1/v1", "m1", "react", "demo")
    asked = RunOptions(thread="t", model="m2", switch_model=True)
    assert resumed(asked, saved_on).model_dump(include={"base_url", "model", "tools"}) == {
        "base_url": "http://a:1/v1",
        "model": "m2",
        "tools": "demo",
    }
    settings = load_settings(base_url="http://u:pw@b:2/v1", api_key="sk-secret-key")
    kept = Endpoint.of(settings, None).metadata()
    assert kept["tether_base_url"] == "http://u:***@b:2/v1" and "sk-" not in json.dumps(kept)
    with open_run_store(tmp_path / "runs.sqlite") as store:
        assert remembered(store, "never-saved") is None


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
                      "--protocol", "react", "--store", "runs.sqlite", "--json",
                      cwd=own_toolsets)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (own_toolsets / "given").read_text() == "data"
    assert json.loads(done.stdout)["thread"]


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


def test_a_base_url_without_v1_that_answers_404_says_which_was_meant(tmp_path: Path) -> None:
    with serve_stub(StubConfig(script=[FINAL])) as stub:
        done = tether("run", "t", "--base-url", stub.root_url, "--protocol", "react",
                      "--store", str(tmp_path / "runs.sqlite"))  # fmt: skip
    assert done.returncode == 2
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .endswith(f"(did you mean --base-url {stub.root_url}/v1?)")
    ), done.stderr


def test_a_base_url_password_is_not_printed_and_a_resume_gets_it_from_the_environment(
    tmp_path: Path,
) -> None:
    """The run keeps its base URL with the password as ***: the printed command showed that
    URL, and a resume went on with *** as the password (or refused the real URL as another
    endpoint). The command now leaves it out, and a resume takes it from TETHER_BASE_URL or
    --base-url when it is the same but for the password."""
    store = tmp_path / "runs.sqlite"
    with serve_stub(StubConfig(script=list(SEED_FLOW_REPLIES))) as stub:
        secret = stub.base_url.replace("http://", "http://op:s3cret-key@", 1)
        for thread, env in (
            ("given", clean_env()),
            ("from-env", clean_env(TETHER_BASE_URL=secret)),
        ):
            stub.config.script[:] = SEED_FLOW_REPLIES
            world = tmp_path / thread
            located = ["--thread", thread, "--store", str(store), "--data-dir", str(world)]
            flag = ["--base-url", secret] if thread == "given" else []
            paused = tether("run", SEED_TASK, *located, "--tools", "demo", *flag,
                            "--protocol", "react", env=env)  # fmt: skip
            assert paused.returncode == 3, paused.stderr
            assert "s3cret-key" not in paused.stdout + paused.stderr
            said = " ".join(paused.stderr.split())
            command = said.split("answer with: ", 1)[1].split(" --approve (or", 1)[0]
            assert "--base-url" not in command and "--model Qwen2.5-7B-Instruct" in command
            noted = "the model's URL is not shown (its password): give it in TETHER_BASE_URL"
            assert (noted in said) == (thread == "given")

            lost = tether("run", *located, "--approve", env=clean_env(TETHER_BASE_URL=NO_MODEL))
            assert lost.returncode == 2 and lost.stderr.count("\n") == 1, lost.stderr
            assert "whose password tether does not keep: give its URL in TETHER_BASE_URL" in (
                " ".join(lost.stderr.split())
            )
            done = tether(*shlex.split(command)[1:], *flag, "--approve", "--json", env=env)
            assert done.returncode == 0, done.stderr
            assert json.loads(done.stdout)["status"] == "completed"
            assert len(payments(world)) == 1
