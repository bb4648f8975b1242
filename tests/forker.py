"""Commands run in processes forked from an interpreter that imported tether once.

A ``tether ...`` or ``python`` command starts an interpreter that imports the same libraries
(about 1.5 s of CPU) before a few milliseconds of work; the suite runs hundreds of them. A
:class:`Forker` is an interpreter that imported :data:`PRELOADED` once. For each command it
forks a child that takes the command's environment, working directory and ``argv``, sends its
stdout and stderr to files, and runs the real entry point (``tether_cli.entry:main``, a
script as ``__main__``, or ``-m`` a module) to its own exit, whose code is the command's. It
then does what an interpreter's shutdown does that a command could observe (its threads
joined, ``atexit`` handlers run, output flushed) and leaves with ``os._exit``: tearing down
the heap the forker imported took 0.8 s of CPU a command and shows nothing. The child is its
own process (its own pid, process group, memory and connections); what it does not do is
start an interpreter, so what an interpreter or a module reads only at start-up
(``PYTHONPATH``, the locale, the terminal's width) is the forker's: :meth:`Forker.forkable`
says when a command's environment differs there, and the caller spawns it instead. The
installed ``tether`` script still runs as a spawned process wherever a person types (the
pseudo-terminal tests), in the pages of docs/vllm.md and in tests/test_install.py.

Every child may connect only to loopback addresses (:data:`LOOPBACK_ONLY`), as the suite's
own guard allows.
"""

from __future__ import annotations

import atexit
import inspect
import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from tests import loopback

VENV_BIN = Path(sys.executable).parent

LOOPBACK_ONLY = (
    inspect.getsource(loopback) + "\nsocket.socket.connect = loopback_only(socket.socket.connect)\n"
)
"""Source run first in every child interpreter: a connection to a non-loopback address is
refused."""

FORKER = (
    r"""
import json, os, runpy, select, signal, sys, tempfile

VENV_BIN = sys.argv[1]
sys.path[0] = VENV_BIN  # as for the installed tether script, not the current directory
"""
    + LOOPBACK_ONLY
    + r"""
import atexit, importlib, threading, traceback

for name in sys.argv[2:]:  # what the commands load (each would import it again when spawned)
    importlib.import_module(name)
assert threading.active_count() == 1, "a preloaded module started a thread: fork is unsafe"


def command(request):
    # In the forked child: become the command and run it to its SystemExit.
    os.setpgid(0, 0)  # its own group, so a timeout stops what it started too
    for fd, path, flags in (
        (0, os.devnull, os.O_RDONLY),
        (1, request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
        (2, request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
    ):
        opened = os.open(path, flags, 0o600)
        os.dup2(opened, fd)
        os.close(opened)
    sys.stdin = open(0, closefd=False)  # the forker's read-ahead of its requests is not its
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    tempfile.tempdir = None  # from the command's TMPDIR
    kind, argv = request["kind"], request["argv"]
    if kind == "tether":
        sys.argv = [os.path.join(VENV_BIN, "tether"), *argv]
        from tether_cli.entry import main

        sys.exit(main())
    if kind == "module":  # python -m MODULE ARGS: the current directory first on sys.path
        sys.argv = ["-m", *argv[1:]]
        sys.path[0] = os.getcwd()
        runpy.run_module(argv[0], run_name="__main__", alter_sys=True)
    else:  # python SCRIPT ARGS: the script's directory first on sys.path
        sys.argv = list(argv)
        sys.path[0] = os.path.dirname(os.path.realpath(argv[0]))
        runpy.run_path(argv[0], run_name="__main__")
    sys.exit(0)


def exit_code(done):
    # What the interpreter makes of a SystemExit's code.
    if done.code is None or isinstance(done.code, int):
        return done.code or 0
    print(done.code, file=sys.stderr)
    return 1


def leave(code):
    # What an interpreter's shutdown does that a command could observe (its threads joined,
    # its atexit handlers run, its output flushed), then out without tearing down the heap the
    # forker imported: that teardown took 0.8 s of CPU a command and nothing it does is seen.
    threading._shutdown()
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def finish(pid, timeout):
    watch = os.pidfd_open(pid)
    try:
        if not select.select([watch], [], [], timeout)[0]:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
    finally:
        os.close(watch)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


print("ready", flush=True)
for line in sys.stdin:
    request = json.loads(line)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        try:
            command(request)
        except SystemExit as done:
            leave(exit_code(done))
        except BaseException:
            traceback.print_exc()
            leave(1)
        leave(0)
    print(json.dumps({"code": finish(pid, request["timeout"])}), flush=True)
"""
)


PRELOADED = (
    *("tether_cli.app", "tether_cli.entry", "tether_cli.run", "tether_cli.runs"),
    *("tether_cli.endpoint", "tether_cli.toolsets", "tether.agent", "tether.testing"),
    *("tether.llm.model", "tether.control.trace_log", "tether.control.sql_cancel"),
    *("tether_world.world", "tether_world.demo", "tether_world.toolkit", "tether_bench.cli"),
    *("tether_bench.options", "tether_bench.runner", "tether_bench.suite", "tether_bench.gates"),
    *("tether_bench.ablation", "tether_bench.agents.agent_executor"),
    *("tether_bench.agents.create_agent", "tether_bench.agents.create_agent_tether"),
    *("tether_bench.agents.tether_agent", "tether_replay.cli", "tether_replay.api"),
    *("tether_replay.player", "tether_replay.middleware", "langchain_openai", "langchain_tether"),
    *("openai.resources.chat", "openai.resources.beta", "httpcore"),
    "matplotlib.pyplot",  # with MPLBACKEND=Agg
)
"""What the commands import: a forker imports it once, before any fork."""

STARTUP_VARIABLES = (
    *("PYTHONPATH", "PYTHONIOENCODING", "PYTHONUTF8", "LANG", "LC_ALL", "LC_CTYPE"),
    *("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "TERM"),
)
"""Read when an interpreter starts, or when a module is imported (the CLI's consoles take the
terminal's width and colours then), so a forked child keeps the forker's."""
SHARED_ENV = {"COLUMNS": "200", "NO_COLOR": "1", "MPLBACKEND": "Agg"}
"""What the CLI tests' commands run with, unless a test sets its own."""


class Forker:
    """An interpreter that imported the commands' libraries; it forks one child a command."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = dict(env)
        self.scratch = Path(tempfile.mkdtemp(prefix="tether-forker-"))
        self.process = subprocess.Popen(
            [sys.executable, "-c", FORKER, str(VENV_BIN), *PRELOADED],
            cwd=self.scratch,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.ready = False
        self.lock = threading.Lock()

    def run(
        self, kind: str, argv: list[str], env: dict[str, str], cwd: Path, timeout: float
    ) -> tuple[int | None, str, str]:
        """(exit code, or None when it did not end in ``timeout`` seconds; stdout; stderr)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        with self.lock:
            if not self.ready:  # the imports are done
                assert self.process.stdout.readline() == "ready\n", "the forker did not start"
                self.ready = True
            out, err = self.scratch / "stdout", self.scratch / "stderr"
            request: dict[str, Any] = {"kind": kind, "argv": argv, "env": env, "cwd": str(cwd)}
            request |= {"stdout": str(out), "stderr": str(err), "timeout": timeout}
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
            reply = self.process.stdout.readline()
            assert reply, "the forker ended"
            code = json.loads(reply)["code"]
            read = lambda path: path.read_text(encoding="utf-8", errors="replace")  # noqa: E731
            return code, read(out), read(err)

    def forkable(self, env: dict[str, str]) -> bool:
        """A command with this environment runs forked as it would spawned: the
        :data:`STARTUP_VARIABLES` are the forker's."""
        return all(env.get(name) == self.env.get(name) for name in STARTUP_VARIABLES)

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)
        for path in self.scratch.iterdir():
            path.unlink()
        self.scratch.rmdir()


_shared: Forker | None = None
_shared_lock = threading.Lock()


def shared_forker() -> Forker:
    """This test process's forker, started at first use and stopped when the process exits."""
    global _shared
    with _shared_lock:
        if _shared is None:
            env = {k: v for k, v in os.environ.items() if not k.upper().startswith("TETHER_")}
            _shared = Forker(env | SHARED_ENV)
            atexit.register(_shared.stop)
        return _shared


def run_tether(
    args: list[str], env: dict[str, str], cwd: Path | str | None, timeout: float
) -> subprocess.CompletedProcess[str]:
    """``tether ARGS`` as :func:`subprocess.run` with captured text output would run it: forked
    from :func:`shared_forker` when :meth:`Forker.forkable`, spawned otherwise."""
    forker = shared_forker()
    where = Path(cwd) if cwd is not None else Path.cwd()
    argv = [str(VENV_BIN / "tether"), *args]
    if not forker.forkable(env):
        return subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout, env=env, cwd=where,
            stdin=subprocess.DEVNULL, check=False,
        )  # fmt: skip
    code, stdout, stderr = forker.run("tether", list(args), env=env, cwd=where, timeout=timeout)
    if code is None:
        raise subprocess.TimeoutExpired(argv, timeout, stdout, stderr)
    return subprocess.CompletedProcess(argv, code, stdout, stderr)
