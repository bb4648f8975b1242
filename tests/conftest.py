"""Shared fixtures: scripted runs, and a guard that keeps tests off the network."""

from __future__ import annotations

import os
import socket
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from langchain_core.messages import AIMessage
from tether import AgentSettings, ToolRegistry, build_graph
from tether.testing import ScriptedChatModel, run_traced

from tests.loopback import loopback_only

settings.register_profile("suite", deadline=None)
settings.load_profile("suite")
"""No property test has a deadline: Hypothesis's default (200 ms an example) is a timed
assertion, which fails on a loaded machine for no fault of the code (speed is checked by the
benchmark scripts)."""

MEMORY_TMP = "/dev/shm"
"""Where scratch files go when TMPDIR is not set, if it is there (a RAM file system)."""


def _scratch_in_memory() -> None:
    """Put the suite's scratch files in memory: pytest's tmp_path, the worlds, run stores and
    checkpoints the tests write, the PostgreSQL data directory, and (through TMPDIR) those of
    the processes the tests start.

    The suite makes thousands of SQLite and PostgreSQL commits, each one waiting for fsync;
    on a disk that the machine shares those waits add up to a large part of its time. No test
    is about what reaches the disk: a process killed by SIGKILL leaves its writes to the
    other processes all the same. A TMPDIR set by whoever runs the suite is left alone.
    """
    if "TMPDIR" in os.environ or not os.path.isdir(MEMORY_TMP):
        return
    if not os.access(MEMORY_TMP, os.W_OK | os.X_OK):
        return
    disk = os.statvfs(MEMORY_TMP)
    if disk.f_bavail * disk.f_frsize < 2 << 30:  # a small /dev/shm (a container's 64 MB)
        return
    os.environ["TMPDIR"] = MEMORY_TMP
    tempfile.tempdir = MEMORY_TMP  # gettempdir() was already asked (pytest's capture files)


_scratch_in_memory()

# `make test-fast` runs the core: -m "not slow and not server and not postgres and not bench".
# Modules mark themselves (pytestmark); these are marked here by path.
SLOW_MODULES = {  # spawn processes, or run whole faulted flows against the world
    "test_resume.py",
    "test_runner.py",
    "test_cli.py",
    "test_kill_resume.py",
    "test_payment_flows.py",
}


TESTS = Path(__file__).parent
LONGEST_FIRST = [  # about 90 s down to 10 s each on two idle cores (pytest --durations=0)
    *("test_docs_examples.py", "test_cli.py", "test_notebooks.py", "bench/test_families.py"),
    *("postgres/test_postgres.py", "bench/test_conversations.py", "bench/test_determinism.py"),
    *("test_speed_scripts.py", "replay/test_cli_replay.py", "bench/test_runner.py"),
    *("postgres/test_fleet.py", "postgres/test_store_password.py", "llm/test_embedded.py"),
    *("test_studio.py", "replay/test_real_runs.py", "bench/test_agents.py"),
    *("bench/test_sim_equivalence.py", "test_install.py", "bench/test_judge.py"),
    *("test_cli_trust.py", "bench/test_operator.py", "llm/test_graph_on_embedded.py"),
    *("test_payment_flows.py", "test_kill_resume.py", "test_run_story.py", "test_packaging.py"),
]
"""The test files that take longest, longest first; the others follow in their own order.

``make test`` runs each file on one of two workers (``--dist loadfile``), handed out in the
order they come. xdist's own order (most tests first) left the long files with few tests, the
servers, notebooks and benchmark runs, to the end, where one of them kept one worker busy
long after the other had finished."""


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config.option, "loadscopereorder"):  # xdist: keep the order collected
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        parts = item.path.parts
        if "bench" in parts[-2:-1]:
            item.add_marker(pytest.mark.bench)
        if item.path.name in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}

    def longest_first(item: pytest.Item) -> int:
        try:
            name = item.path.relative_to(TESTS).as_posix()
        except ValueError:
            return len(rank)
        return rank.get(name, len(rank))

    items.sort(key=longest_first)  # stable: each file's tests keep their order


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Any connection outside 127.0.0.0/8 fails loudly: the suite must run offline."""
    monkeypatch.setattr(socket.socket, "connect", loopback_only(socket.socket.connect))
    yield


@pytest.fixture(autouse=True)
def _no_tether_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's TETHER_* variables must not change what the tests see."""
    import os

    for name in list(os.environ):
        if name.startswith("TETHER_"):
            monkeypatch.delenv(name)


class SleepRecorder:
    """Stands in for time.sleep: records the delays, never waits."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


Runner = Callable[..., tuple[dict[str, Any], ScriptedChatModel]]


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()


@pytest.fixture
def run_script(sleeps: SleepRecorder) -> Runner:
    """Run the graph on a scripted model: run_script(replies, tools=[...], **settings).

    The returned state carries the run's streamed trace under ``"trace"`` for convenience."""

    def run(
        replies: list[str | AIMessage],
        *,
        tools: list[Any] | ToolRegistry = (),  # type: ignore[assignment]
        task: str = "do the task",
        rules: tuple[Any, ...] = (),
        usage: bool = True,
        **settings: Any,
    ) -> tuple[dict[str, Any], ScriptedChatModel]:
        model = ScriptedChatModel(responses=list(replies), usage=usage)
        registry = tools if isinstance(tools, ToolRegistry) else ToolRegistry(tools)
        graph = build_graph(
            AgentSettings(**settings),
            model=model,
            registry=registry,
            rules=rules,
            sleep=sleeps,
            seed=7,
        )
        state, trace = run_traced(graph, {"task": task})
        return {**state, "trace": trace}, model

    return run
