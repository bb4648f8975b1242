"""Worker processes (``python -m tests.NAME ARGS``) forked from a server that imported them once.

A test that kills or crashes a worker, or hands a run from one worker to another, needs real
processes; it does not need each of them to start an interpreter and import LangGraph, the
agent and the world again, which is most of what a worker costs. The workers here are forked
from one server process per test session (multiprocessing's forkserver), which has imported
:data:`WORKERS` and nothing else: it never opened a database, a world or a run, so a forked
worker starts as a new one would, with its own pid, memory and connections, and it exits, or
dies by SIGKILL, on its own. It runs its module as ``python -m`` would (``__name__`` is
``"__main__"``, ``sys.argv`` holds the arguments) in the environment and directory it is given,
its stdout and stderr are pipes, and :class:`Worker` answers like :class:`subprocess.Popen`.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import runpy
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

ROOT = Path(__file__).parent.parent
WORKERS = [
    "tests.kill_worker",
    "tests.crash_worker",
    "tests.fleet_worker",
    "tests.middleware_kill_worker",
]
"""Imported by the server before it forks anything (every worker finds its imports done)."""

_CONTEXT = multiprocessing.get_context("forkserver")
_CONTEXT.set_forkserver_preload(WORKERS)


def _run_module(
    module: str, args: list[str], cwd: str, env: dict[str, str], out: Connection, err: Connection
) -> None:
    """In the forked process: stdout and stderr to the pipes, then ``python -m module args``."""
    os.dup2(out.fileno(), 1)
    os.dup2(err.fileno(), 2)
    out.close()
    err.close()
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    sys.argv = [module, *args]
    sys.modules.pop(module)  # run afresh as __main__, its imports already done
    runpy.run_module(module, run_name="__main__", alter_sys=True)


class Worker:
    """``python -m module args`` in a forked process: the parts of Popen that the tests use.

    Its stdout and stderr are read all along by two threads (a worker never blocks on a full
    pipe); :meth:`readline` hands out stdout's lines as they come."""

    def __init__(
        self, module: str, *args: str, cwd: Path = ROOT, env: dict[str, str] | None = None
    ) -> None:
        if module not in WORKERS:
            raise ValueError(f"{module} is not preloaded; add it to WORKERS")
        self.args = [sys.executable, "-m", module, *args]
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        ends = Connection(out_write, readable=False), Connection(err_write, readable=False)
        self.process = _CONTEXT.Process(
            target=_run_module,
            args=(module, list(args), str(cwd), dict(os.environ if env is None else env), *ends),
            name=module,
        )
        try:
            self.process.start()
        finally:
            for end in ends:  # the forked process has its own copies
                end.close()
        self._lines: queue.Queue[str] = queue.Queue()
        self._err: list[str] = []
        self._readers = [
            threading.Thread(target=self._read_lines, args=(out_read,), daemon=True),
            threading.Thread(target=self._read_all, args=(err_read,), daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _read_lines(self, fd: int) -> None:
        with open(fd, encoding="utf-8") as stream:
            for line in stream:
                self._lines.put(line)
        self._lines.put("")  # the end: the worker has exited or died

    def _read_all(self, fd: int) -> None:
        with open(fd, encoding="utf-8") as stream:
            self._err.append(stream.read())

    @property
    def pid(self) -> int | None:
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        """The exit code; ``-N`` when signal N ended it; None while it runs."""
        return self.process.exitcode

    def poll(self) -> int | None:
        return self.process.exitcode

    def readline(self, timeout: float = 120) -> str:
        """stdout's next line ("" once the worker has ended), as ``stdout.readline()``."""
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise subprocess.TimeoutExpired(self.args, timeout) from None
        if line == "":
            self._lines.put("")  # and again for any later call
        return line

    def wait(self, timeout: float | None = None) -> int:
        self.process.join(timeout)
        if self.process.exitcode is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return self.process.exitcode

    def send_signal(self, signal: int) -> None:
        if self.process.exitcode is None and self.process.pid is not None:
            os.kill(self.process.pid, signal)

    def kill(self) -> None:
        self.send_signal(9)

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        """Wait for the end: stdout's lines not yet read, and all of stderr."""
        self.wait(timeout)
        for reader in self._readers:
            reader.join(timeout)
        out = []
        while (line := self._lines.get()) != "":
            out.append(line)
        self._lines.put("")
        return "".join(out), "".join(self._err)


def run(module: str, *args: str, timeout: float | None = None, **kw: Any) -> CompletedProcess[str]:
    """Run a worker to its end, as :func:`subprocess.run` with ``capture_output``."""
    worker = Worker(module, *args, **kw)
    out, err = worker.communicate(timeout)
    return CompletedProcess(worker.args, worker.wait(), out, err)
