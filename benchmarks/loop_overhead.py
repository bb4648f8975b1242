"""The loop's own cost, side by side with the bare framework, in one process, on a scripted
model (no server, no network): the figures the README quotes for speed and memory.

1. CPU per step: 20-step runs (19 tool calls of one trivial tool, then an answer), each agent
   given the same scripted replies with fixed usage (so no agent pays for token counting it
   did not ask for). tether (native tool calls) against LangChain's ``create_agent`` and
   LangGraph's prebuilt ``create_react_agent``; tether (ReAct text) against AgentExecutor.
   Repeats are interleaved (agent A, B, C, A, B, C...) so machine noise hits each alike.
2. Import: CPU time and peak RSS of a fresh interpreter that imports tether (or its graph
   builder) against one that imports ``create_agent``.
3. Checkpoint growth: bytes the SQLite checkpointer adds per step over a 20-step run.
4. Concurrency (``concurrency.py``): 64 runs at once with ``ainvoke`` against a scripted
   model that waits 50 ms per call, and CPU per step of async runs against sync ones.

    uv run python benchmarks/loop_overhead.py            # all four
    uv run python benchmarks/loop_overhead.py --only cpu --repeats 9
    uv run python benchmarks/loop_overhead.py --only concurrency --repeats 3
"""

from __future__ import annotations

import argparse
import itertools
import json
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from concurrency import concurrency
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from scripted import (
    STEPS,
    clock_start,
    lookup,
    react_replies,
    tether_settings,
    tool_call_replies,
)
from tether import ToolRegistry, build_graph
from tether.testing import ScriptedChatModel

# --- 1. CPU per step ---------------------------------------------------------------------------


def tether_runner(protocol: str) -> Callable[[list[AIMessage]], Any]:
    def run(replies: list[AIMessage]) -> Any:
        model = ScriptedChatModel(responses=list(replies))
        graph = build_graph(tether_settings(protocol), model=model, registry=ToolRegistry([lookup]))
        return lambda: graph.invoke({"task": "look up k0 to k18"})

    return run


def create_agent_runner(replies: list[AIMessage]) -> Any:
    from langchain.agents import create_agent

    agent = create_agent(ScriptedChatModel(responses=list(replies)), tools=[lookup])
    task = {"messages": [HumanMessage("look up k0 to k18")]}
    return lambda: agent.invoke(task, {"recursion_limit": 100})  # type: ignore[arg-type]


def prebuilt_runner(replies: list[AIMessage]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated in favour of create_agent; still shipped
        from langgraph.prebuilt import create_react_agent

        agent = create_react_agent(ScriptedChatModel(responses=list(replies)), [lookup])
    task = {"messages": [HumanMessage("look up k0 to k18")]}
    return lambda: agent.invoke(task, {"recursion_limit": 100})


def agent_executor_runner(replies: list[AIMessage]) -> Any:
    from langchain_classic.agents import AgentExecutor, create_react_agent
    from langchain_core.prompts import PromptTemplate
    from tether_bench.agents.agent_executor import REACT_PROMPT

    model = ScriptedChatModel(responses=list(replies))
    agent = create_react_agent(model, [lookup], PromptTemplate.from_template(REACT_PROMPT))
    executor = AgentExecutor(
        agent=agent, tools=[lookup], max_iterations=STEPS + 5, handle_parsing_errors=True
    )
    return lambda: executor.invoke({"input": "look up k0 to k18"})


AGENTS: dict[str, tuple[Callable[[list[AIMessage]], Any], Callable[[], list[AIMessage]]]] = {
    "tether (native)": (tether_runner("native"), tool_call_replies),
    "create_agent": (create_agent_runner, tool_call_replies),
    "langgraph prebuilt": (prebuilt_runner, tool_call_replies),
    "tether (react)": (tether_runner("react"), react_replies),
    "AgentExecutor": (agent_executor_runner, react_replies),
}


def cpu_per_step(repeats: int) -> dict[str, Any]:
    samples: dict[str, list[float]] = {name: [] for name in AGENTS}
    for make, replies in AGENTS.values():  # warm-up: imports, first compile
        make(replies())()
    for _ in range(repeats):
        for name, (make, replies) in AGENTS.items():
            run = make(replies())
            started = clock_start()
            run()
            samples[name].append((time.process_time() - started) / STEPS * 1000)
    medians = {name: statistics.median(values) for name, values in samples.items()}
    return {
        "ms_per_step_median": {k: round(v, 3) for k, v in medians.items()},
        "ms_per_step_all": {k: [round(x, 3) for x in v] for k, v in samples.items()},
        "tether_native_over_create_agent": round(
            medians["tether (native)"] / medians["create_agent"], 2
        ),
        "tether_react_over_agent_executor": round(
            medians["tether (react)"] / medians["AgentExecutor"], 2
        ),
    }


# --- 2. Import ---------------------------------------------------------------------------------

IMPORTS = {
    "import tether": "import tether",
    "from tether import build_graph": "from tether import build_graph",
    "from langchain.agents import create_agent": "from langchain.agents import create_agent",
}
PROBE = (  # VmHWM is this process's own peak RSS (ru_maxrss can carry the parent's over)
    "import resource, sys, json\n{stmt}\n"
    "u = resource.getrusage(resource.RUSAGE_SELF)\n"
    "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]\n"
    "print(json.dumps({{'cpu_s': u.ru_utime + u.ru_stime, 'rss_mb': int(hwm) / 1024,"
    " 'modules': len(sys.modules)}}))"
)


def import_cost(repeats: int) -> dict[str, Any]:
    results: dict[str, dict[str, list[float]]] = {k: {"cpu_s": [], "rss_mb": []} for k in IMPORTS}
    for _ in range(repeats):
        for name, stmt in IMPORTS.items():
            out = subprocess.run(
                [sys.executable, "-c", PROBE.format(stmt=stmt)],
                capture_output=True,
                text=True,
                check=True,
            )
            data = json.loads(out.stdout)
            for key in ("cpu_s", "rss_mb"):
                results[name][key].append(data[key])
    medians = {
        name: {key: round(statistics.median(v), 3) for key, v in values.items()}
        for name, values in results.items()
    }
    base = medians["from langchain.agents import create_agent"]
    ratios = {
        name: {key: round(m[key] / base[key], 2) for key in m}
        for name, m in medians.items()
        if not name.startswith("from langchain")
    }
    return {"median": medians, "ratio_to_create_agent": ratios}


# --- 3. Checkpoint growth ----------------------------------------------------------------------


def checkpoint_growth() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "runs.sqlite"
        conn = sqlite3.connect(str(path), check_same_thread=False)
        saver = SqliteSaver(conn)
        saver.setup()
        model = ScriptedChatModel(responses=list(react_replies()))
        graph = build_graph(
            tether_settings("react"),
            model=model,
            registry=ToolRegistry([lookup]),
            checkpointer=saver,
        )
        config: Any = {"configurable": {"thread_id": "growth"}}
        sizes: list[int] = []
        for chunk in graph.stream(
            {"task": "look up k0 to k18"}, config, stream_mode="updates", durability="sync"
        ):
            if "start" in chunk or "act" in chunk or chunk.get("think", {}).get("status"):
                sizes.append(_stored_bytes(conn))  # after the start, and after each step
        conn.close()
    growth = [b - a for a, b in itertools.pairwise(sizes)]
    return {
        "bytes_per_step": growth,
        "median_kb": round(statistics.median(growth) / 1024, 2),
        "max_kb": round(max(growth) / 1024, 2),
        "step_1_kb": round(growth[0] / 1024, 2),
        "step_19_kb": round(growth[-2] / 1024, 2),
    }


def _stored_bytes(conn: sqlite3.Connection) -> int:
    checkpoints = conn.execute(
        "SELECT COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0) FROM checkpoints"
    ).fetchone()[0]
    writes = conn.execute("SELECT COALESCE(SUM(LENGTH(value)), 0) FROM writes").fetchone()[0]
    return int(checkpoints) + int(writes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=["cpu", "import", "checkpoint", "concurrency"])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    report: dict[str, Any] = {
        "python": sys.version.split()[0],
        "peak_rss_mb_before": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }
    if args.only in (None, "cpu"):
        report["cpu_per_step"] = cpu_per_step(args.repeats)
    if args.only in (None, "import"):
        report["import"] = import_cost(args.repeats)
    if args.only in (None, "checkpoint"):
        report["checkpoint_growth"] = checkpoint_growth()
    if args.only in (None, "concurrency"):
        report["concurrency"] = concurrency(args.repeats)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
