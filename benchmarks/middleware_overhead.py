"""CPU per step of LangChain's ``create_agent`` with tether's middleware, side by side with
``create_agent`` and the stock LangChain middleware a careful user adds for the same job
(ModelCallLimit, ToolCallLimit, ModelRetry, ToolRetry, HumanInTheLoop), and with plain
``create_agent`` for reference, in one process, on a scripted tool-calling model (no server).

Each run is STEPS model calls: tool calls of three trivial tools, then an answer the
final-answer check takes, every reply with fixed usage (so the budget counts the requests,
not the replies). Both agents get the same replies and tools; the agents are built before the
clock starts. Repeats are interleaved (plain, tether, tether, plain, ...) so machine noise
hits each alike; the table gives the medians and the ratio of tether's to the stock set's,
and the median of the ratios of each repeat's two samples (taken back to back).

    uv run python benchmarks/middleware_overhead.py
    uv run python benchmarks/middleware_overhead.py --repeats 61 --runs 5
    uv run python benchmarks/middleware_overhead.py --json      # the figures as JSON
    uv run python benchmarks/middleware_overhead.py --unchecked # and check_final off
    uv run python benchmarks/middleware_overhead.py --layered   # and two empty tool hooks
    uv run python benchmarks/middleware_overhead.py --instructions  # counted by callgrind

CPU time on a shared machine moves by a few percent between runs of the same code, as much as
the gap it measures here; ``--instructions`` counts instead the instructions each step of the
stock set and of tether's runs (valgrind's callgrind, about a minute), a figure that moves by
about 0.1% between runs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import (
    AgentMiddleware,
    HumanInTheLoopMiddleware,
    ModelCallLimitMiddleware,
    ModelRetryMiddleware,
    ToolCallLimitMiddleware,
    ToolRetryMiddleware,
)
from langchain_core.messages import AIMessage, HumanMessage
from langchain_tether import tether_middleware
from scripted import USAGE, clock_start
from tether import AgentSettings, tool
from tether.testing import ScriptedChatModel

STEPS = 9
TASK = "Look up keys k0 to k2, convert 10 to 12 and check codes c0 and c1."


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


@tool
def convert(amount: int) -> dict[str, Any]:
    """Convert an amount."""
    return {"amount": amount, "converted": amount * 2}


@tool
def check(code: str) -> dict[str, Any]:
    """Check a code."""
    return {"code": code, "valid": True}


TOOLS = [lookup, convert, check]
CALLS = [
    ("lookup", {"key": "k0"}),
    ("convert", {"amount": 10}),
    ("check", {"code": "c0"}),
    ("lookup", {"key": "k1"}),
    ("convert", {"amount": 11}),
    ("check", {"code": "c1"}),
    ("lookup", {"key": "k2"}),
    ("convert", {"amount": 12}),
]
ANSWER = "All keys were looked up, the amounts converted and the codes checked."


def replies(steps: int = STEPS) -> list[AIMessage]:
    calls = [
        AIMessage(
            "",
            tool_calls=[{"name": name, "args": args, "id": f"c{i}"}],
            usage_metadata=USAGE,  # type: ignore[arg-type]
        )
        for i, (name, args) in enumerate(CALLS[: steps - 1])
    ]
    return [*calls, AIMessage(ANSWER, usage_metadata=USAGE)]  # type: ignore[arg-type]


def settings() -> AgentSettings:
    return AgentSettings(max_steps=STEPS + 5, token_budget=10**7)


def plain() -> Any:
    return create_agent(ScriptedChatModel(responses=list(replies())), tools=TOOLS)


def stock() -> Any:
    """The stock middleware for the same job: limits, retries and approval of writes."""
    middleware: list[AgentMiddleware[Any, Any, Any]] = [
        HumanInTheLoopMiddleware(interrupt_on={}),  # these tools are reads: none asks
        ModelCallLimitMiddleware(run_limit=STEPS + 5),
        ToolCallLimitMiddleware(run_limit=STEPS + 5),
        ModelRetryMiddleware(),
        ToolRetryMiddleware(),
    ]
    return create_agent(
        ScriptedChatModel(responses=list(replies())), tools=TOOLS, middleware=middleware
    )


def with_tether(check_final: bool = True) -> Any:
    retries = [ToolRetryMiddleware(), ModelRetryMiddleware()]
    chosen = settings().model_copy(update={"check_final": check_final})
    middleware = [
        HumanInTheLoopMiddleware(interrupt_on={}),
        *tether_middleware(chosen, tools=TOOLS, retries=retries),
    ]
    return create_agent(
        ScriptedChatModel(responses=list(replies())), tools=TOOLS, middleware=middleware
    )


AGENTS: dict[str, Callable[[], Any]] = {
    "create_agent": plain,
    "create_agent + stock middleware": stock,
    "create_agent + tether_middleware": with_tether,
}
UNCHECKED = "create_agent + tether_middleware, check_final off"
"""``--unchecked``: tether's middleware without the final-answer check, a control the stock
set has no counterpart of (what the rest of tether's controls cost beside the stock set)."""
LAYERED = "create_agent + stock middleware + two empty tool hooks"
"""``--layered``: the stock set with two more middleware whose tool hook only calls on (as
many tool hooks around a call as tether's list has): what the layers cost by themselves."""


class EmptyToolHook(AgentMiddleware[Any, Any, Any]):
    """A tool hook that does nothing but call on."""

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return handler(request)


class OtherEmptyToolHook(EmptyToolHook):
    """A second one (create_agent takes one middleware of a class)."""


def layered() -> Any:
    stock_set = [
        HumanInTheLoopMiddleware(interrupt_on={}),
        ModelCallLimitMiddleware(run_limit=STEPS + 5),
        ToolCallLimitMiddleware(run_limit=STEPS + 5),
        ModelRetryMiddleware(),
        EmptyToolHook(),
        ToolRetryMiddleware(),
        OtherEmptyToolHook(),
    ]
    return create_agent(
        ScriptedChatModel(responses=list(replies())), tools=TOOLS, middleware=stock_set
    )


def invoke(agent: Any) -> Any:
    out = agent.invoke({"messages": [HumanMessage(TASK)]}, {"recursion_limit": 100})
    if out["messages"][-1].text != ANSWER:
        raise RuntimeError(f"the run did not end with the scripted answer: {out['messages'][-1]}")
    return out


def cpu_per_step(
    repeats: int, runs: int, unchecked: bool = False, layers: bool = False
) -> dict[str, Any]:
    """Milliseconds of process CPU per step: each sample is ``runs`` runs of STEPS steps. Also
    its user and system parts, and the page faults a step takes (the kernel's work: its time
    is system time)."""
    agents = {**AGENTS, **({UNCHECKED: lambda: with_tether(False)} if unchecked else {})}
    agents |= {LAYERED: layered} if layers else {}
    samples: dict[str, list[float]] = {name: [] for name in agents}
    kernel: dict[str, list[tuple[float, float, float]]] = {name: [] for name in agents}
    for make in agents.values():  # warm-up: imports, first compile, tiktoken's tables
        invoke(make())
    names = list(agents)
    for repeat in range(repeats):
        order = names if repeat % 2 == 0 else names[::-1]  # interleaved
        for name in order:
            built = [agents[name]() for _ in range(runs)]
            started, before = clock_start(), resource.getrusage(resource.RUSAGE_SELF)
            for agent in built:
                invoke(agent)
            samples[name].append((time.process_time() - started) / (runs * STEPS) * 1000)
            after = resource.getrusage(resource.RUSAGE_SELF)
            parts = (after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime)
            faults = after.ru_minflt - before.ru_minflt
            kernel[name].append((*(part * 1000 for part in parts), faults))
    medians = {name: statistics.median(values) for name, values in samples.items()}
    stock_ms, tether_ms = (medians[name] for name in names[1:3])
    paired = [t / p for p, t in zip(*(samples[name] for name in names[1:3]), strict=True)]
    return {
        "steps_per_run": STEPS,
        "runs_per_sample": runs,
        "repeats": repeats,
        "ms_per_step_median": {k: round(v, 3) for k, v in medians.items()},
        "ms_per_step_all": {k: [round(x, 3) for x in v] for k, v in samples.items()},
        "user_system_ms_per_step_mean": {  # the kernel accounts CPU time in ticks: a mean
            name: [round(statistics.mean(v[i] for v in values) / (runs * STEPS), 3) for i in (0, 1)]
            for name, values in kernel.items()
        },
        "page_faults_per_step": {
            name: round(statistics.mean(v[2] for v in values) / (runs * STEPS), 2)
            for name, values in kernel.items()
        },
        "ratio": round(tether_ms / stock_ms, 2),
        "paired_ratio_median": round(statistics.median(paired), 3),
        "paired_tether_cheaper": round(sum(ratio < 1 for ratio in paired) / len(paired), 2),
        **({"ratio_unchecked": round(medians[UNCHECKED] / stock_ms, 2)} if unchecked else {}),
        **({"ratio_layered": round(tether_ms / medians[LAYERED], 2)} if layers else {}),
    }


COUNTED = list(AGENTS)[1:]
"""``--instructions``: the agents whose steps are counted (the stock set and tether's)."""


def instructions_per_step(runs: int) -> dict[str, Any]:
    """Instructions per step of each agent of COUNTED, counted by callgrind in a process of its
    own over ``runs`` runs after a warm-up (:func:`counted_runs` turns the counting on only
    around them), and tether's ratio to the stock set; also those of the main thread (the
    rest ran in the threads ToolNode starts for the tool calls)."""
    counted: dict[str, float] = {}
    main_thread: dict[str, float] = {}
    for name in COUNTED:
        with tempfile.TemporaryDirectory() as out:
            command = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--fair-sched=yes"]
            command += ["--separate-threads=yes", f"--callgrind-out-file={out}/counts"]
            command += [sys.executable, __file__, "--counted", name, "--runs", str(runs)]
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"callgrind failed on {name}: {done.stderr[-2000:]}")
            counted[name] = instructions_in(done.stderr) / (runs * STEPS)
            main = Path(out, "counts-01").read_text(encoding="utf-8")
            main_thread[name] = instructions_in(main, r"^totals: (\d+)") / (runs * STEPS)
    stock, tether = (counted[name] for name in COUNTED)
    return {
        "instructions_per_step": counted,
        "main_thread_per_step": main_thread,
        "runs": runs,
        "ratio": round(tether / stock, 3),
    }


def instructions_in(log: str, pattern: str = r"Collected : (\d+)") -> int:
    """The instructions callgrind's log (or one thread's counts file) says it counted."""
    found = re.search(pattern, log, re.MULTILINE)
    if found is None:
        raise RuntimeError(f"no count in callgrind's log: {log[-2000:]}")
    return int(found.group(1))


def callgrind_counts(state: str) -> None:
    """Turn callgrind's counting of this process ``on`` or ``off``."""
    command = ["callgrind_control", "-i", state, str(os.getpid())]
    subprocess.run(command, check=True, capture_output=True)


def counted_runs(name: str, runs: int, switch: Callable[[str], object] = callgrind_counts) -> None:
    """``--counted``: ``runs`` runs of the agent ``name``, after a warm-up run, with callgrind
    counting only while they run (``switch`` turns it on and off)."""
    built = [AGENTS[name]() for _ in range(runs + 1)]
    invoke(built.pop())
    switch("on")
    for agent in built:
        invoke(agent)
    switch("off")


def table(report: dict[str, Any]) -> str:
    if "instructions_per_step" in report:
        main = report["main_thread_per_step"]
        rows = [
            f"| {name} | {count / 1e6:.2f} M | {main[name] / 1e6:.2f} M | "
            f"{(count - main[name]) / 1e6:.2f} M |"
            for name, count in report["instructions_per_step"].items()
        ]
        head = ["| agent | instructions/step | main thread | tool calls' threads |"]
        head.append("|---|---:|---:|---:|")
        tail = (
            f"ratio (tether / stock middleware): **{report['ratio']:.3f}x**; {report['runs']} "
            f"runs of {STEPS} steps each, counted by callgrind, python {sys.version.split()[0]}"
        )
        return "\n".join([*head, *rows, "", tail])
    rows = [
        "| agent | CPU ms/step (median) | min | max | user | system | page faults/step |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, median in report["ms_per_step_median"].items():
        values = report["ms_per_step_all"][name]
        user, system = report["user_system_ms_per_step_mean"][name]
        faults = report["page_faults_per_step"][name]
        rows.append(
            f"| {name} | {median:.2f} | {min(values):.2f} | {max(values):.2f} | {user:.2f} "
            f"| {system:.2f} | {faults:.2f} |"
        )
    rows.append("")
    rows.append(
        f"ratio of the medians (tether / stock middleware): **{report['ratio']:.2f}x**; "
        f"median of the ratios of each repeat's pair: {report['paired_ratio_median']:.3f}x "
        f"(tether's the cheaper in {report['paired_tether_cheaper']:.0%} of pairs); "
        f"{report['repeats']} interleaved repeats of {report['runs_per_sample']} runs of "
        f"{report['steps_per_run']} steps, python {sys.version.split()[0]}; user and system "
        "time are means (the kernel accounts them in ticks), page faults a mean"
    )
    if "ratio_unchecked" in report:
        rows.append(f"with check_final off: {report['ratio_unchecked']:.2f}x the stock set")
    if "ratio_layered" in report:
        rows.append(
            f"tether / the stock set with two empty tool hooks: {report['ratio_layered']:.2f}x"
        )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=31)
    parser.add_argument("--runs", type=int, default=3, help="runs per timed sample")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--unchecked", action="store_true", help=UNCHECKED.split(", ")[1])
    parser.add_argument("--layered", action="store_true", help=LAYERED.split(" + ", 2)[2])
    parser.add_argument(
        "--instructions", action="store_true", help="count instructions (needs valgrind)"
    )
    parser.add_argument("--counted", choices=COUNTED, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.counted:
        return counted_runs(args.counted, args.runs)
    if args.instructions:
        report = instructions_per_step(args.runs)
    else:
        report = cpu_per_step(args.repeats, args.runs, args.unchecked, args.layered)
    print(json.dumps(report, indent=2) if args.json else table(report))


if __name__ == "__main__":
    main()
