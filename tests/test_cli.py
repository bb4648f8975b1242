"""The tether command as people use it, run as a separate process (and under a terminal)."""

from __future__ import annotations

import io
import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any, get_args

import pytest
from rich.console import Console
from tether import CAUSES, STATUSES, Status, StopCause, TraceEventName
from tether.agent import Agent
from tether.control.store import open_run_store
from tether.settings import AgentSettings
from tether.testing import ScriptedChatModel
from tether_cli.console import EVENT_HANDLERS, STATUS_STYLE, TracePrinter
from tether_cli.output import EXIT_COMPLETED, EXIT_ERROR, EXIT_STOPPED, EXIT_WAITING, exit_code
from tether_world import World

from tests.cli_helpers import (
    NO_MODEL,
    RESUMED,
    TETHER,
    PtyProcess,
    clean_env,
    hanging_model,
    payments,
    saved,
    tether,
    waiting_run,
    where,
)
from tests.contract.vllm_stub import StubConfig, serve_stub


# --- bad input: one line, exit 2, no traceback -----------------------------------------------
@pytest.mark.parametrize(
    "args",
    [
        ["run", "task", "--max-steps", "0"],
        ["run", "task", "--token-budget", "0"],
        ["run", "task", "--max-steps", "many"],
        ["run"],
        ["runs", "show", "nope"],  # an unknown thread
        ["run", "--thread", "nope", "--edit", "[1, 2]"],
        ["run", "--thread", "nope", "--approve", "--reject", "no"],
    ],
)
def test_bad_arguments_get_one_line_and_exit_2(tmp_path: Path, args: list[str]) -> None:
    done = tether(*args, "--store", str(tmp_path / "runs.sqlite"))
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["run", "t", "--tools", ".", "--store", "{tmp}/runs.sqlite"], {}),  # a relative module
        (["runs", "list", "--store", "postgresql://u:secret@[bad/x"], {}),  # unparsable host
        (["runs", "list"], {"TETHER_STORE": "postgres://u@127.0.0.1:1/x?bogus=1"}),
        (["run", "t", "--base-url", "http://[::1", "--store", "{tmp}/runs.sqlite"], {}),
        (["runs", "list", "--store", "{tmp}/runs.sqlite"], {"TETHER_BASE_URL": "http://h:x/v1"}),
        (["world", "serve", "--faults", "{tmp}/list.json", "--data-dir", "{tmp}/world"], {}),
        (["world", "hash", "--url", "sqlite:///{tmp}/list.json"], {}),  # not a database
        (["run", "t", "--tools", "demo", "--world-db", "sqlite:///{tmp}/list.json"], {}),
        (["runs", "list", "--store", "mysql://user:secret@host/db"], {}),  # was a SQLite path
        (["run", "t"], {"TETHER_STORE": "mysql://user:secret@host/db"}),
        (["run", "t", "--thread", "", "--store", "{tmp}/runs.sqlite"], {}),
        (["run", "t", "--thread", " \t", "--store", "{tmp}/runs.sqlite"], {}),
        (["world", "serve", "--host", "not a host", "--data-dir", "{tmp}/world"], {}),  # was 3
        (["world", "serve", "--host", "", "--data-dir", "{tmp}/world"], {}),  # every interface
        (["bench", "--set", "heed=banana", "--out", "{tmp}/bench"], {}),  # a pydantic dump
    ],
)
def test_malformed_input_gets_one_line_and_exit_2_not_an_internal_error(
    tmp_path: Path, args: list[str], env: dict[str, str]
) -> None:
    """Each of these was "internal error" and exit 1; the README promises one line and 2."""
    (tmp_path / "list.json").write_text("[1]")  # valid JSON, but neither a plan nor a database
    args = [arg.replace("{tmp}", str(tmp_path)) for arg in args]
    done = tether(*args, env=clean_env(**env), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    assert "secret" not in done.stderr  # a password in a URL is never echoed
    assert not [p for p in tmp_path.rglob("*") if "secret" in str(p)]  # nor made a path


@pytest.mark.parametrize(
    "command", [["runs", "list"], ["demo"], ["run", "t"], ["world", "hash"], ["graph"]]
)
@pytest.mark.parametrize(
    ("variable", "value"), [("TETHER_MAX_STEPS", "0"), ("TETHER_APPROVAL_TOOLS", "not json")]
)
def test_a_bad_environment_value_stops_every_command(
    tmp_path: Path, command: list[str], variable: str, value: str
) -> None:
    done = tether(*command, env=clean_env(**{variable: value}), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and variable in done.stderr, done.stderr
    assert not (tmp_path / "data").exists()  # stopped before touching anything


def test_an_unknown_variable_is_named_with_the_closest_setting(tmp_path: Path) -> None:
    env = clean_env(TETHER_TOKEN_BUDGE="100")
    done = tether("run", "--max-steps", "0", env=env)  # the warning comes before the error
    assert done.returncode == 2
    assert "TETHER_TOKEN_BUDGE is not a tether setting" in done.stderr
    assert "did you mean TETHER_TOKEN_BUDGET?" in done.stderr


def test_a_task_that_is_not_utf8_gets_one_clear_line() -> None:
    done = subprocess.run(
        [TETHER, "run", b"\xff\xfepay".decode("utf-8", "surrogateescape")],
        capture_output=True,
        env=clean_env(),
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.decode() == (
        "error: argument 2 is not valid UTF-8 text (byte 0xff at character 0)\n"
    )


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    args = ["run", "--thread", "x", "--edit", "[1]"]
    assert "Traceback" not in tether(*args).stderr
    done = tether("--debug", *args)
    assert done.returncode != 0 and "Traceback" in done.stderr


# --- answering an approval later ---------------------------------------------------------------
@pytest.mark.parametrize("flag", [["--approve"], ["--yes"]])
def test_resume_with_a_flag_approves_the_waiting_call(tmp_path: Path, flag: list[str]) -> None:
    store, world = waiting_run(tmp_path)
    done = tether("run", "--thread", "pay-1", *flag, *where(store, world), env=RESUMED)
    assert "approval needed: pay_order" in done.stderr, done.stderr
    assert "is marked side_effects" in done.stderr
    assert len(payments(world)) == 1
    assert saved(store, "pay-1").status == "max_steps" and done.returncode == 1


def test_a_new_message_on_a_waiting_thread_is_refused_and_the_run_kept(tmp_path: Path) -> None:
    store, world = waiting_run(tmp_path)
    done = tether(
        "run", "pay order ORD-2024-002", "--thread", "pay-1", *where(store, world), env=RESUMED
    )
    assert done.returncode == 2 and "holds an unfinished run: resume it instead" in done.stderr
    assert payments(world) == [] and saved(store, "pay-1").pending is not None


def test_resume_with_reject_tells_the_model_and_pays_nothing(tmp_path: Path) -> None:
    store, world = waiting_run(tmp_path)
    done = tether(
        "run", "--thread", "pay-1", "--reject", "amount is wrong", *where(store, world), env=RESUMED
    )
    assert done.returncode == 1, done.stderr
    assert payments(world) == []
    history = saved(store, "pay-1").state["history"]
    assert history[-1]["kind"] == "rejected"


@pytest.fixture(scope="module")
def ended_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A run that waited for approval and then ended (its rejection answered), made once:
    the tests below assert that they leave it as it was."""
    store, world = waiting_run(tmp_path_factory.mktemp("ended"))
    tether("run", "--thread", "pay-1", "--reject", "no", *where(store, world), env=RESUMED)
    return store, world


@pytest.mark.parametrize("flag", [["--approve"], ["--reject", "no"], ["--edit", "{}"]])
def test_a_decision_for_a_run_that_is_not_waiting_is_bad_usage(
    ended_run: tuple[Path, Path], flag: list[str]
) -> None:
    store, world = ended_run
    before = saved(store, "pay-1").state
    done = tether("run", "--thread", "pay-1", *flag, *where(store, world), env=RESUMED)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "pay-1 is not waiting for approval" in lines[0], done.stderr
    assert saved(store, "pay-1").state == before


def test_a_bad_edit_is_refused_and_the_run_keeps_waiting(tmp_path: Path) -> None:
    store, world = waiting_run(tmp_path)
    edit = json.dumps({"order_id": "ORD-2024-001"})  # no amount
    done = tether("run", "--thread", "pay-1", "--edit", edit, *where(store, world), env=RESUMED)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].startswith("error: edited arguments rejected")
    assert saved(store, "pay-1").pending is not None and payments(world) == []


def test_without_an_answer_the_run_waits_and_says_how_to_answer(tmp_path: Path) -> None:
    """The command it prints resumes on the same endpoint; --json says what waits (it
    printed nothing on stdout)."""
    store, world = waiting_run(tmp_path)
    done = tether("run", "--thread", "pay-1", "--json", *where(store, world), env=RESUMED)
    assert done.returncode == 3
    assert (
        f"tether run --thread pay-1 --tools demo --data-dir {world} --store {store} --base-url "
        f"{NO_MODEL} --model Qwen2.5-7B-Instruct --protocol json_schema --approve"
        in (" ".join(done.stderr.split()))
    )
    view = json.loads(done.stdout)
    assert (view["thread"], view["status"]) == ("pay-1", "running")
    assert view["pending"]["action_requests"][0]["name"] == "pay_order"
    assert saved(store, "pay-1").pending is not None


def test_interactive_answer_at_a_terminal(tmp_path: Path) -> None:
    store, world = waiting_run(tmp_path)
    child = PtyProcess([TETHER, "run", "--thread", "pay-1", *where(store, world)], RESUMED)
    child.expect("approve, edit or reject?")
    child.send("")  # Enter alone decides nothing: it was approve, and paid
    child.expect("Please select one of the available options")
    child.expect("approve, edit or reject?")
    child.send("e")
    child.expect("new arguments")
    child.send("")  # Enter alone at the arguments: back to the question (it ran them as they were)
    child.expect("approve, edit or reject?")
    child.send("e")
    child.expect("new arguments")
    child.send('{"order_id": "ORD-2024-001"}')  # missing amount: asked again
    child.expect("missing required field 'amount'")
    child.expect("approve, edit or reject?")
    child.send("r")
    child.expect("reason for the model")
    child.send("not today")
    assert child.finish() == 1, child.output
    assert payments(world) == []
    assert "The operator rejected this call: not today" in json.dumps(
        saved(store, "pay-1").state["tool_buffer"], ensure_ascii=False
    )


# --- Ctrl-C, runs list, token count ------------------------------------------------------------
def test_ctrl_c_stops_at_once_and_the_run_resumes(tmp_path: Path) -> None:
    store, world = tmp_path / "runs.sqlite", tmp_path / "world"
    with hanging_model() as base_url:
        child = subprocess.Popen(
            [TETHER, "run", "look up ORD-2024-001", "--thread", "cc", "--base-url", base_url,
             "--store", str(store), "--tools", "demo", "--data-dir", str(world)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env(),
        )  # fmt: skip
        assert base_url.asked.wait(60), "the run never called the model"
        deadline = time.monotonic() + 60
        while not (store.exists() and _has_run(store, "cc")):
            assert time.monotonic() < deadline and child.poll() is None
            time.sleep(0.05)
        assert child.poll() is None  # saved, and still inside the model call that never answers
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=20)  # well before the model timeout (60 s)
    assert child.returncode == 130
    assert "interrupted: run saved as thread cc; resume with: tether run --thread cc" in err
    assert f"--base-url {base_url} --model Qwen2.5-7B-Instruct --protocol json_schema" in err
    with World.create(world) as w, open_run_store(store) as run_store:
        done = "Thought: done\nFinal Answer: ORD-2024-001 found"  # nothing looked up: sent back
        model = ScriptedChatModel(responses=[done, done])
        agent = Agent(AgentSettings(), store=run_store, registry=w.registry(), model=model)
        assert agent.status("cc").status == "running"
        assert agent.resume("cc").status == "completed"


def _has_run(store: Path, thread: str) -> bool:
    try:
        saved(store, thread)
    except Exception:
        return False
    return True


def test_runs_list_shows_full_ids_and_json(tmp_path: Path) -> None:
    thread = "a-very-long-thread-id-0123456789abcdef0123456789abcdef"
    store, _ = waiting_run(tmp_path, thread)
    table = tether("runs", "list", "--store", str(store), env=clean_env(COLUMNS="60"))
    assert thread in table.stdout, table.stdout
    listed = json.loads(tether("runs", "list", "--store", str(store), "--json").stdout)
    assert [(r["thread_id"], r["waiting_for"]) for r in listed] == [(thread, "approval")]


def test_a_resumed_runs_token_count_continues(tmp_path: Path) -> None:
    from tether_cli.run import drive
    from tether_cli.run_options import RunOptions

    store, world = waiting_run(tmp_path)
    with open_run_store(store) as run_store, World.create(world) as w:
        agent = Agent(AgentSettings(), store=run_store, registry=w.registry())
        result, printer = drive(agent, RunOptions(thread="pay-1"))
    spent = result.state["usage"]["total_tokens"]
    assert isinstance(printer, TracePrinter) and spent > 0 and printer.tokens == spent


def test_help_does_not_load_the_agent_stack() -> None:
    code = (
        "import sys, tether_cli\n"
        "heavy = [m for m in ('langgraph', 'langchain_core', 'openai', 'sqlalchemy') "
        "if m in sys.modules]\n"
        "print(heavy)"
    )
    done = subprocess.run(
        [str(Path(TETHER).parent / "python"), "-c", code], capture_output=True, text=True
    )
    assert done.stdout.strip() == "[]", done.stderr


# --- defaults: the command and `make run` take the settings' own --------------------------------
def test_run_without_protocol_takes_the_one_that_fits_the_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tether import load_settings
    from tether_cli.run_options import RunOptions

    for name in ("TETHER_PROTOCOL", "TETHER_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    server = "http://127.0.0.1:8000/v1"
    embedded = load_settings(**RunOptions(task="t").settings_overrides())
    served = load_settings(**RunOptions(task="t", base_url=server).settings_overrides())
    assert (embedded.protocol_name, served.protocol_name) == ("json_schema", "json_schema")
    chosen = RunOptions(task="t", protocol="react").settings_overrides()
    assert load_settings(**chosen).protocol_name == "react"


def test_make_run_is_tether_run_with_no_settings_of_its_own() -> None:
    makefile = (Path(__file__).parents[1] / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\nrun: setup\n", 1)[1].splitlines()[0]
    assert 'tether run --tools demo "$(TASK)"' in recipe, recipe


# --- statuses and trace events: every one the core declares is handled ------------------------
def test_the_exit_code_is_the_status_tables() -> None:
    assert {status: exit_code(status) for status in STATUSES} == {
        status: info.exit_code for status, info in STATUSES.items()
    }
    assert exit_code("completed") == EXIT_COMPLETED and exit_code("running") == EXIT_WAITING
    stopped = set(STATUSES) - {"completed", "running"}
    assert {exit_code(status) for status in stopped} == {EXIT_STOPPED}
    assert EXIT_ERROR not in {info.exit_code for info in STATUSES.values()}


@pytest.mark.parametrize("status", ["exploded", None, 3])
def test_a_status_tether_does_not_have_exits_as_an_error(status: Any) -> None:
    assert exit_code(status) == EXIT_ERROR


def test_the_console_styles_every_status() -> None:
    assert set(STATUS_STYLE) == set(get_args(Status))


def test_the_console_handles_every_trace_event() -> None:
    assert set(EVENT_HANDLERS) == set(get_args(TraceEventName))


def printed(*events: Any) -> str:
    buffer = io.StringIO()
    printer = TracePrinter(Console(file=buffer, width=200, highlight=False, no_color=True))
    for event in events:
        printer.event(event)
    return buffer.getvalue()


@pytest.mark.parametrize("status", list(STATUSES))
def test_the_end_of_an_older_run_says_what_its_status_means(status: str) -> None:
    usage = {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}
    detail = {"status": status, "reason": "the reason", "usage": usage}
    out = printed({"step": 2, "event": "finish", "detail": detail})
    assert f"{status}: {STATUSES[status].meaning}\n" in out
    assert "why    the reason" in out


@pytest.mark.parametrize("cause", list(get_args(StopCause)))
def test_the_end_of_a_run_says_what_stopped_it(cause: str) -> None:
    """The console tells the cause, not the status: two rules that end ``failed`` (the
    breaker, one tool's failures) read differently."""
    detail = {"status": "failed", "cause": cause, "reason": "the reason", "usage": {}}
    out = printed({"step": 2, "event": "finish", "detail": detail})
    assert f"failed ({cause}): {CAUSES[cause]}\n" in out


def test_a_replay_before_the_end_is_told() -> None:
    detail = {"tool": "pay_order", "arguments": {"order_id": "ORD-1"}}
    out = printed({"step": 3, "event": "resolve", "detail": detail})
    assert 'loop   replays pay_order {"order_id": "ORD-1"} before it ends the run' in out
    assert "its outcome is unknown" in out


@pytest.mark.parametrize(
    "event",
    [
        {"step": 4, "event": "teleport", "detail": {"to": "mars"}},  # from another version
        {"step": 4, "event": None, "detail": {"to": "mars"}},
        {"event": ["start"], "detail": {"to": "mars"}},
        {},
    ],
)
def test_an_unknown_trace_event_gets_one_visible_line(event: dict[str, Any]) -> None:
    out = printed(event)
    assert out.count("\n") == 1 and out.lstrip().startswith("trace  unknown event "), out
    assert repr(event.get("event")) in out and f"at step {event.get('step', '?')}:" in out
    if "detail" in event:
        assert '{"to": "mars"}' in out


# --- untrusted text on the terminal ------------------------------------------------------------
TOOLSET = """
from tether import ToolRegistry, tool


@tool(side_effects=True)
def send(note: str) -> str:
    \"\"\"Send a note.\"\"\"
    return "sent " + note + "\\x1b]0;owned\\x07"


class Notes:
    def registry(self):
        return ToolRegistry([send])

    def close(self):
        pass


def create_world(data_dir):
    return Notes()
"""
HOSTILE = {  # what each would do to the terminal if it were written raw
    "\x1b]52;c;cm0gLXJmIH4=\x07": "\\x1b]52;c;cm0gLXJmIH4=\\x07",  # OSC 52: set the clipboard
    "\x1b[2K": "\\x1b[2K",  # erase the line
    "\x1b[2J": "\\x1b[2J",  # clear the screen
    "\x9b31m": "\\x9b31m",  # C1 CSI: colours, as ESC [ would
    "\x1b]0;owned\x07": "\\x1b]0;owned\\x07",  # OSC 0: retitle the window (tool output)
}


def test_untrusted_text_reaches_the_terminal_visible_not_obeyed(tmp_path: Path) -> None:
    """Streamed model text, the story, the approval prompt, tool output and the answer
    carried escape sequences to the terminal that then asked for approval. Each is now
    shown as its escape, under a real terminal; a lone surrogate no longer stops the run."""
    (tmp_path / "notes_toolset.py").write_text(TOOLSET)
    replies = [
        "Thought: copy \x1b]52;c;cm0gLXJmIH4=\x07 now\x1b[2K\n"
        'Action: send\nAction Input: {"note": "hi\\u001b[2Jthere"}',
        "Thought: done\nFinal Answer: sent \x9b31m red \ud800",
        "Thought: done\nFinal Answer: sent \x9b31m red \ud800",  # after the check's note
    ]
    with serve_stub(StubConfig(script=replies)) as stub:
        args = [TETHER, "run", "send a note", "--base-url", stub.base_url, "--thread", "esc"]
        args += ["--protocol", "react"]  # the stub's replies are ReAct text
        args += ["--tools", "notes_toolset", "--store", str(tmp_path / "runs.sqlite")]
        child = PtyProcess(args, clean_env(PYTHONPATH=str(tmp_path)))
        child.expect("approve, edit or reject?")
        child.send("a")
        code = child.finish()
    out = child.output
    assert code == 0, out
    for raw, shown in HOSTILE.items():
        assert raw not in out, (raw, out)
        assert shown in out, (shown, out)
    assert "\\ud800" in out and "PYTHONIOENCODING" not in out
    shown = tether("runs", "show", "esc", "--store", str(tmp_path / "runs.sqlite"))
    assert shown.returncode == 0 and not any(raw in shown.stdout for raw in HOSTILE), shown
