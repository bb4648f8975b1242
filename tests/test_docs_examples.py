"""Every ```python and ```bash example of the README and the docs runs, as a reader runs it.

A page is a tutorial: its blocks run in order, in one scratch working directory of its own
that holds links to the checkout's files (so ``docs/examples/...`` and ``benchmarks/...``
resolve, and what an example writes stays in the scratch directory). Its Python blocks share
one namespace, in a child interpreter kept for the page; each shell command is a spawned
process (``bash -c``, the workspace's virtual environment first on ``PATH``; ``uv run X``
runs that ``X``). ``export`` lines carry over to the page's later commands, a trailing ``&``
starts a server in the background (stopped with its page), ``\\``-continued lines join.

Most commands are ``tether ...`` or ``python`` scripts. Such a command, when it is a plain
command line (no pipe, redirection, variable, ``VAR=`` prefix or ``&``), runs in a process
forked from an interpreter that imported their libraries once (``tests/forker.py``), as the
CLI tests run theirs. The commands of :data:`SPAWNED` pages, those with shell syntax and the
servers still run as spawned processes, so the installed ``tether`` script is run as a reader
runs it too.

The model is never a provider's. The suite starts the vLLM stub of
``tests/contract/vllm_stub.py`` on 127.0.0.1 with a free port; it answers as a small agent
would: one call of an offered tool, then an answer quoting the tool's result, in the
protocol of the request (``tools``, ``response_format`` or ReAct text). The docs' own server
URL, ``http://localhost:8000`` or ``http://127.0.0.1:8000``, is rewritten to the stub's in
each block's text before it runs, and ``TETHER_BASE_URL`` (the setting the docs name) is set
to it for examples that leave the endpoint to the environment. Other fixed ports in a shell
block (``--port 8100``) are rewritten to free ones. Processes get only loopback: the child
interpreter refuses any other connection, as the suite's own guard does.

An HTML comment right before a block changes how it runs; a block without one must run:

* ``<!-- example: not run: WHY -->``: skipped, the reason recorded (a GPU server, the test
  suite itself, a package index);
* ``<!-- example: run with: ARGS -->``: each command runs with ARGS appended (a later option
  wins: one scenario, one seed instead of the full benchmark);
* ``<!-- example: run as: COMMANDS -->``: the block is replaced by COMMANDS, one a line;
* ``<!-- example: file NAME -->``: the Python block is written to NAME in the page's
  directory (a module the page's commands load), not run;
* ``<!-- example: excerpt of PATH -->``: the Python block must be PATH's own code (comments
  and layout aside; ``...`` stands for code left out), so a quote cannot drift.

A command must exit 0, or the code its own comment names (``# ... exits 3``: a run that
waits for approval). A benchmark or replay command that several pages
give (the same benchmark in four pages) runs once, in the page met first.
"""

from __future__ import annotations

import ast
import json
import os
import queue
import re
import shlex
import socket
import subprocess
import sys
import tempfile
import threading
import time
import tokenize
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path
from typing import Any

import pytest

from tests.contract.vllm_stub import RunningStub, StubConfig, serve_stub
from tests.forker import LOOPBACK_ONLY, Forker

# The pages run in the first test's setup; on a loaded machine that outlasts the default.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent
DOCS = sorted(path for path in (ROOT / "docs").rglob("*.md") if "examples" not in path.parts)
PAGES = [ROOT / "README.md", *DOCS]
DOCS_URLS = ("http://localhost:8000", "http://127.0.0.1:8000")
"""The vLLM server the docs point at, rewritten to the stub's."""
STANDALONE = re.compile(r"(tether (bench|replay)|python (benchmarks/\S+|-m tether_bench\S*)) ")
"""Commands whose outcome no later command reads: one run of each is enough."""
COMMAND_TIMEOUT = 300  # a guard against a hung process, not a measure of speed
THREADS = 2  # pages run at once
SPAWNED = {"docs/vllm.md"}
"""Pages whose commands all run as spawned processes (``bash -c``), never forked."""
FENCE = re.compile(r"^```(python|bash)[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)


@dataclass
class Block:
    """One fenced example and the note before it."""

    page: str
    line: int
    lang: str
    text: str
    note: str = ""

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def blocks_of(path: Path) -> list[Block]:
    """The page's python and bash blocks, each with the ``example:`` comment before it."""
    source = path.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(source):
        before = source[: match.start()].rstrip()
        comment = before[before.rfind("<!--") + 4 : -3].strip() if before.endswith("-->") else ""
        found.append(
            Block(
                page=path.relative_to(ROOT).as_posix(),
                line=source.count("\n", 0, match.start()) + 1,
                lang=match.group(1),
                text=match.group(2),
                note=comment.removeprefix("example:").strip()
                if comment.startswith("example:")
                else "",
            )
        )
    return found


def commands_of(text: str) -> list[str]:
    """Shell command lines: continuations joined, blank and comment-only lines dropped."""
    joined = re.sub(r"\\\n\s*", " ", text)
    return [
        line.strip()
        for line in joined.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


def commands_in(path: Path) -> int:
    """How many shell commands a page gives: its share of the run time, roughly."""
    return sum(len(commands_of(b.text)) for b in blocks_of(path) if b.lang == "bash")


# --- the stub's side: a small agent --------------------------------------------------------


def offered_tools(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Tool name -> its arguments' JSON schema, from whichever protocol the request uses."""
    if body.get("tools"):
        return {
            tool["function"]["name"]: tool["function"].get("parameters") or {}
            for tool in body["tools"]
        }
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
    if schema is not None:
        found: dict[str, dict[str, Any]] = {}
        _tool_branches(schema, found)
        return found
    system = next((m.get("content") or "" for m in body.get("messages", [])), "")
    found = {}
    for name, rest in re.findall(r"^- (\w+)(?:: |\()(.*)$", str(system), re.M):
        found[name] = {"properties": {}, "required": re.findall(r"(\w+)(?=[,)])", rest)}
    for name, arguments in re.findall(r"^- (\w+): .*\n  arguments: (\{.*\})$", str(system), re.M):
        found[name] = json.loads(arguments)
    return found


def _tool_branches(node: Any, into: dict[str, dict[str, Any]]) -> None:
    if isinstance(node, dict):
        properties = node.get("properties")
        if isinstance(properties, dict) and "const" in (properties.get("tool") or {}):
            into[properties["tool"]["const"]] = properties.get("arguments") or {}
        for value in node.values():
            _tool_branches(value, into)
    elif isinstance(node, list):
        for value in node:
            _tool_branches(value, into)


def arguments_for(schema: dict[str, Any]) -> dict[str, Any]:
    """Values for the required arguments: the docs' order id for any text, an amount for
    an amount."""
    properties = schema.get("properties") or {}
    values: dict[str, Any] = {}
    for name in schema.get("required", list(properties)):
        spec = properties.get(name) or {}
        kinds = {spec.get("type"), *(branch.get("type") for branch in spec.get("anyOf", []))}
        if spec.get("enum"):
            values[name] = spec["enum"][0]
        elif "amount" in name:  # a payment: an amount the schema accepts, as a string
            values[name] = "299.00"
        elif kinds & {"integer", "number"}:
            values[name] = 1
        elif spec.get("type") == "boolean":
            values[name] = False
        else:
            values[name] = "ORD-2024-001"
    return values


def agent_reply(body: dict[str, Any]) -> tuple[str | None, dict[str, Any] | None]:
    """Calls of offered tools, one a step: ``query_order`` (else the first tool), then
    ``pay_order`` when the task asks to pay; then an answer quoting the last result (the same
    answer again if it is sent back)."""
    messages = body.get("messages", [])
    tools = offered_tools(body)
    native = bool(body.get("tools"))
    structured = "response_format" in body
    task = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
    plan = ["query_order" if "query_order" in tools else next(iter(tools), "")]
    plan += ["pay_order"] if "付款" in task or "pay " in task.lower() else []
    prompt = str(messages[-1].get("content") or "") if messages else ""
    # tether's own prompt is one user message listing the steps so far; create_agent's a chat
    steps = len(set(re.findall(r"^\[step (\d+)\]", prompt, re.M)))
    step = max(steps, sum(m.get("role") == "assistant" for m in messages))
    if step < len(plan) and plan[step] in tools:
        name = plan[step]
        arguments = arguments_for(tools[name])
        if native:
            return None, {"name": name, "arguments": json.dumps(arguments)}
        if structured:
            action = {"tool": name, "arguments": arguments}
            return json.dumps({"thought": "look it up", "action": action}), None
        return f"Thought: look it up\nAction: {name}\nAction Input: {json.dumps(arguments)}", None
    results = [m for m in messages[1:] if m.get("role") in ("tool", "user")]
    last = str(results[-1].get("content") or "") if results else ""
    if "## Tool results" in last:
        last = last.split("## Tool results", 1)[1].split("\n## ", 1)[0]
    answer = "Found: " + " ".join(last.split())[-300:]
    if native:
        return answer, None
    if structured:
        return json.dumps({"thought": "done", "action": {"final_answer": answer}}), None
    return f"Thought: done\nFinal Answer: {answer}", None


# --- running a page ------------------------------------------------------------------------

MARK = "@@example-done@@ "
"""Ends the child's output for one block, with its outcome."""
CHILD = (
    r"""
import json, sys, traceback
"""
    + LOOPBACK_ONLY
    + r"""MARK = "@@example-done@@ "
namespace = {"__name__": "__main__"}
for line in sys.stdin:
    block = json.loads(line)
    try:
        exec(compile(block["code"], block["where"], "exec"), namespace)
        reply = {"ok": True}
    except BaseException:
        reply = {"ok": False, "error": traceback.format_exc()}
    sys.stdout.flush()
    print("\n" + MARK + json.dumps(reply), file=sys.__stdout__, flush=True)
"""
)


def forked_form(command: str) -> tuple[str, list[str]] | None:
    """``("tether" | "script" | "module", argv)`` for a plain ``tether`` or ``python`` command
    line; None when it needs a shell (operators, expansions, a ``VAR=`` prefix) or is another
    program."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    words = list(lexer)
    operator, expansion = set("();<>|&"), set("$`*?[~")
    if not words or "=" in words[0]:
        return None
    if any(set(word) <= operator or set(word) & expansion for word in words):
        return None
    if words[0] == "tether":
        return "tether", words[1:]
    if words[0] == "python" and len(words) > 2 and words[1] == "-m":
        return "module", words[2:]
    if words[0] == "python" and len(words) > 1 and words[1].endswith(".py"):
        return "script", words[1:]
    return None


@dataclass
class PageRun:
    """What running one page's blocks found."""

    ran: list[str] = field(default_factory=list)
    stand_ins: list[str] = field(default_factory=list)
    not_run: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)  # reported, never asserted


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[str]) -> None:
    """Until something listens on ``port`` (or the process died)."""
    while process.poll() is None:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            threading.Event().wait(0.1)


def without_uv_run(command: str) -> str:
    """``uv run X`` as the environment's ``X`` (a reader's uv runs the same one), also after
    ``VAR=value`` prefixes: there a real ``uv run`` in the scratch directory would build a
    second virtual environment of the whole workspace (about a gigabyte, and its imports
    compiled afresh) before running the same ``X``."""
    return re.sub(r"(^|[;&|]\s*|\bdo\s+)((?:\w+=\S*\s+)*)uv run ", r"\1\2", command)


def excerpt_problem(block: Block) -> str | None:
    """None when the block is the named file's own code (comments, layout and ``...`` aside)."""
    path = block.note.removeprefix("excerpt of").strip()
    source = (ROOT / path).read_text(encoding="utf-8")

    def squeezed(text: str) -> str:
        tokens = tokenize.generate_tokens(StringIO(text).readline)
        kept = (t.string for t in tokens if t.type not in (tokenize.COMMENT, tokenize.NL))
        return "".join("".join(kept).split())

    code = squeezed(source)
    for statement in ast.parse(block.text).body:  # each may stand apart in the file
        quoted = squeezed(ast.get_source_segment(block.text, statement) or "")
        if not re.search(re.escape(quoted).replace(r"\.\.\.", ".*?"), code, re.S):
            return f"{block.where}: not the code of {path} (the quote drifted)"
    return None


class Page:
    """One page's blocks, run in order in a scratch directory."""

    def __init__(
        self,
        blocks: list[Block],
        stub: RunningStub,
        seen: dict[str, str],
        forkers: queue.Queue[Forker],
    ) -> None:
        self.blocks = blocks
        self.stub = stub
        self.seen = seen  # command -> the block that ran it first
        self.forkers = forkers  # one is this page's while it runs
        self.spawned = bool(blocks) and blocks[0].page in SPAWNED
        self.lock = threading.Lock()
        self.result = PageRun()
        self.background: list[subprocess.Popen[str]] = []
        self.child: subprocess.Popen[str] | None = None
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_")}
        self.env |= {
            "PATH": f"{VENV_BIN}{os.pathsep}{self.env.get('PATH', '')}",
            "TETHER_BASE_URL": stub.base_url,
            "MPLBACKEND": "Agg",
            "PYTHONUNBUFFERED": "1",
        }
        self.env.pop("VIRTUAL_ENV", None)

    def urls(self, text: str) -> str:
        for url in DOCS_URLS:
            text = text.replace(url, self.stub.root_url)
        return text

    def run(self) -> PageRun:
        with tempfile.TemporaryDirectory(prefix="tether-doc-") as scratch:
            self.cwd = Path(scratch)
            for entry in ROOT.iterdir():
                if entry.name not in {".git", ".venv", "data", "bench-out", "site"}:
                    (self.cwd / entry.name).symlink_to(entry)
            self.forker = self.forkers.get()
            try:
                for block in self.blocks:
                    self.one(block)
            finally:
                self.forkers.put(self.forker)
                self.stop()
        return self.result

    def one(self, block: Block) -> None:
        note = block.note
        if note.startswith("not run:"):
            self.result.not_run.append(f"{block.where}: {note.removeprefix('not run:').strip()}")
            return
        if note.startswith("excerpt of"):
            problem = excerpt_problem(block)
            self.result.failures += [problem] if problem else []
            self.result.ran.append(block.where)
            return
        if note.startswith("file "):
            name = note.removeprefix("file ").strip()
            (self.cwd / name).write_text(block.text, encoding="utf-8")
            self.result.ran.append(block.where)
            return
        if block.lang == "python":
            self.python(block)
        else:
            self.shell(block)

    def python(self, block: Block) -> None:
        if self.child is None:
            self.child = subprocess.Popen(
                [sys.executable, "-c", CHILD],
                cwd=self.cwd,
                env=self.env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
        assert self.child.stdin is not None and self.child.stdout is not None
        payload = {"code": self.urls(block.text), "where": block.where}
        self.child.stdin.write(json.dumps(payload) + "\n")
        self.child.stdin.flush()
        output = []
        for line in self.child.stdout:
            if line.startswith(MARK):
                reply = json.loads(line.removeprefix(MARK))
                break
            output.append(line)
        else:
            reply = {"ok": False, "error": "the interpreter ended"}
        self.result.ran.append(block.where)
        if not reply["ok"]:
            self.result.failures.append(f"{block.where}:\n{''.join(output)}{reply['error']}")

    def shell(self, block: Block) -> None:
        note = block.note
        if note.startswith("run as:"):
            commands = commands_of(note.removeprefix("run as:"))
            self.result.stand_ins.append(block.where)
        else:
            commands = commands_of(block.text)
            if note.startswith("run with:"):
                extra = note.removeprefix("run with:").strip()
                commands = [f"{command.split(' #')[0].rstrip()} {extra}" for command in commands]
                self.result.stand_ins.append(block.where)
            elif note:
                self.result.failures.append(f"{block.where}: unknown example note {note!r}")
                return
            else:
                self.result.ran.append(block.where)
        ports = {port: free_port() for port in re.findall(r"--port (\d+)", block.text)}
        for command in commands:
            for old, new in ports.items():
                command = re.sub(rf"(--port |:){old}\b", rf"\g<1>{new}", command)
            if not self.command(block, self.urls(command)):
                return

    def command(self, block: Block, command: str) -> bool:
        """Run one command line; False (and a failure recorded) when it failed."""
        words = shlex.split(command, comments=True)
        if words and words[0] == "export":
            for assignment in words[1:]:
                name, _, value = assignment.partition("=")
                self.env[name] = value
            return True
        command = without_uv_run(command)
        if words and words[-1] == "&":
            server = subprocess.Popen(
                ["bash", "-c", re.sub(r"\s&\s*(#.*)?$", "", command)],
                cwd=self.cwd,
                env=self.env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                text=True,
                start_new_session=True,
            )
            self.background.append(server)
            port = re.search(r"--port (\d+)", command)
            if port:
                wait_for_port(int(port.group(1)), server)
            return True
        if STANDALONE.match(command):
            with self.lock:
                key = " ".join(shlex.split(command, comments=True))
                first = self.seen.setdefault(key, block.where)
            if first != block.where:
                return True  # the same command already ran (or runs) for another page
        started = time.monotonic()
        form = None if self.spawned else forked_form(command)
        if form is not None:
            code, stdout, stderr = self.forker.run(
                *form, env=self.env, cwd=self.cwd, timeout=COMMAND_TIMEOUT
            )
        else:
            try:
                done = subprocess.run(
                    ["bash", "-c", command],
                    cwd=self.cwd,
                    env=self.env,
                    capture_output=True,
                    text=True,
                    timeout=COMMAND_TIMEOUT,
                    check=False,
                )
                code, stdout, stderr = done.returncode, done.stdout, done.stderr
            except subprocess.TimeoutExpired:
                code, stdout, stderr = None, "", ""
        if code is None:
            self.result.failures.append(f"{block.where}: `{command}` did not end")
            return False
        self.result.seconds[command] = round(time.monotonic() - started, 1)
        expected = re.search(r"#.*\bexits (\d)\b", command)
        if code != (int(expected.group(1)) if expected else 0):
            tail = (stdout[-1500:] + stderr[-2500:]).strip()
            self.result.failures.append(f"{block.where}: `{command}` exited {code}\n{tail}")
            return False
        return True

    def stop(self) -> None:
        if self.child is not None:
            assert self.child.stdin is not None
            self.child.stdin.close()
            self.child.wait(timeout=60)
        for server in self.background:
            os.killpg(server.pid, 15)
            server.wait(timeout=60)


# --- the tests ------------------------------------------------------------------------------


def page_name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@pytest.fixture(scope="module")
def page_runs(request: pytest.FixtureRequest) -> Iterator[dict[str, Future[PageRun]]]:
    """The selected pages, all started at once on two threads, against one stub server; each
    thread has a forker of its own."""
    selected = {
        item.callspec.params["page"]
        for item in request.session.items
        if item.path == request.path and hasattr(item, "callspec")
    }
    forkers: queue.Queue[Forker] = queue.Queue()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_")}
    env["MPLBACKEND"] = "Agg"
    started = [Forker(env) for _ in range(THREADS)]  # importing while the stub starts
    for forker in started:
        forkers.put(forker)
    try:
        with serve_stub(StubConfig(respond=agent_reply)) as stub:
            seen: dict[str, str] = {}
            with ThreadPoolExecutor(max_workers=THREADS) as pool:
                busiest_first = sorted(PAGES, key=lambda path: -commands_in(path))
                yield {
                    page_name(path): pool.submit(Page(blocks_of(path), stub, seen, forkers).run)
                    for path in busiest_first
                    if page_name(path) in selected
                }
    finally:
        for forker in started:
            forker.stop()


@pytest.mark.parametrize("page", [page_name(path) for path in PAGES if blocks_of(path)])
def test_the_examples_of_a_page_run(page: str, page_runs: dict[str, Future[PageRun]]) -> None:
    result = page_runs[page].result()
    assert not result.failures, "\n\n".join(result.failures)
    for reason in result.not_run:
        assert reason.split(": ", 1)[1], f"{reason}: a block that does not run says why"


def test_every_page_with_examples_is_collected() -> None:
    """The fence pattern finds every python and bash block a page has."""
    for path in PAGES:
        text = path.read_text(encoding="utf-8")
        opened = len(re.findall(r"^```(?:python|bash)\s*$", text, re.M))
        assert opened == len(blocks_of(path)), page_name(path)
