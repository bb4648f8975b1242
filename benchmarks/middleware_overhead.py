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
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
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


def invoke(agent: Any) -> Any:
    out = agent.invoke({"messages": [HumanMessage(TASK)]}, {"recursion_limit": 100})
    if out["messages"][-1].text != ANSWER:
        raise RuntimeError(f"the run did not end with the scripted answer: {out['messages'][-1]}")
    return out


def cpu_per_step(repeats: int, runs: int, unchecked: bool = False) -> dict[str, Any]:
    """Milliseconds of process CPU per step: each sample is ``runs`` runs of STEPS steps."""
    agents = {**AGENTS, **({UNCHECKED: lambda: with_tether(False)} if unchecked else {})}
    samples: dict[str, list[float]] = {name: [] for name in agents}
    for make in agents.values():  # warm-up: imports, first compile, tiktoken's tables
        invoke(make())
    names = list(agents)
    for repeat in range(repeats):
        order = names if repeat % 2 == 0 else names[::-1]  # interleaved
        for name in order:
            built = [agents[name]() for _ in range(runs)]
            started = clock_start()
            for agent in built:
                invoke(agent)
            samples[name].append((time.process_time() - started) / (runs * STEPS) * 1000)
    medians = {name: statistics.median(values) for name, values in samples.items()}
    stock_ms, tether_ms = (medians[name] for name in names[1:3])
    paired = [t / p for p, t in zip(*(samples[name] for name in names[1:3]), strict=True)]
    return {
        "steps_per_run": STEPS,
        "runs_per_sample": runs,
        "repeats": repeats,
        "ms_per_step_median": {k: round(v, 3) for k, v in medians.items()},
        "ms_per_step_all": {k: [round(x, 3) for x in v] for k, v in samples.items()},
        "ratio": round(tether_ms / stock_ms, 2),
        "paired_ratio_median": round(statistics.median(paired), 2),
        **({"ratio_unchecked": round(medians[UNCHECKED] / stock_ms, 2)} if unchecked else {}),
    }


def table(report: dict[str, Any]) -> str:
    rows = [
        "| agent | CPU ms/step (median) | min | max |",
        "|---|---:|---:|---:|",
    ]
    for name, median in report["ms_per_step_median"].items():
        values = report["ms_per_step_all"][name]
        rows.append(f"| {name} | {median:.2f} | {min(values):.2f} | {max(values):.2f} |")
    rows.append("")
    rows.append(
        f"ratio of the medians (tether / stock middleware): **{report['ratio']:.2f}x**; "
        f"median of the ratios of each repeat's pair: {report['paired_ratio_median']:.2f}x; "
        f"{report['repeats']} interleaved repeats of {report['runs_per_sample']} runs of "
        f"{report['steps_per_run']} steps, python {sys.version.split()[0]}"
    )
    if "ratio_unchecked" in report:
        rows.append(f"with check_final off: {report['ratio_unchecked']:.2f}x the stock set")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=31)
    parser.add_argument("--runs", type=int, default=3, help="runs per timed sample")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--unchecked", action="store_true", help=UNCHECKED.split(", ")[1])
    args = parser.parse_args()
    report = cpu_per_step(args.repeats, args.runs, args.unchecked)
    print(json.dumps(report, indent=2) if args.json else table(report))


if __name__ == "__main__":
    main()
