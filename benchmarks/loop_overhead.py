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
4. Concurrency: 64 runs at once with ``ainvoke`` against a scripted model that waits 50 ms
   per call; overlap is 64 x one run's wall time / the 64 runs' wall time. Also CPU per step
   of async runs against sync ones. tether, ``create_agent`` and a bare LangGraph loop (a
   model node and a tool node, no checks) alike.

    uv run python benchmarks/loop_overhead.py            # all four
    uv run python benchmarks/loop_overhead.py --only cpu --repeats 9
    uv run python benchmarks/loop_overhead.py --only concurrency --repeats 3
"""

from __future__ import annotations

import argparse
import asyncio
import gc
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

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph

from tether import AgentSettings, ToolRegistry, build_graph, tool
from tether.testing import ScriptedChatModel

STEPS = 20
USAGE = {"input_tokens": 120, "output_tokens": 12, "total_tokens": 132}


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


@tool(name="lookup")
async def alookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def tool_call_replies(steps: int = STEPS) -> list[AIMessage]:
    calls = [
        AIMessage(
            "",
            tool_calls=[{"name": "lookup", "args": {"key": f"k{i}"}, "id": f"c{i}"}],
            usage_metadata=USAGE,  # type: ignore[arg-type]
        )
        for i in range(steps - 1)
    ]
    return [*calls, AIMessage("all keys looked up", usage_metadata=USAGE)]  # type: ignore[arg-type]


def react_replies(steps: int = STEPS) -> list[AIMessage]:
    calls = [
        AIMessage(
            f'Thought: next key\nAction: lookup\nAction Input: {{"key": "k{i}"}}',
            usage_metadata=USAGE,  # type: ignore[arg-type]
        )
        for i in range(steps - 1)
    ]
    final = "Thought: done\nFinal Answer: all keys looked up"
    return [*calls, AIMessage(final, usage_metadata=USAGE)]  # type: ignore[arg-type]


def _clock_start() -> float:
    """Process CPU time, after a full garbage collection: building the graphs before the
    clock leaves objects whose collection (a full pass over the heap, about 0.1 s with 64
    graphs) would otherwise land inside the timed runs, on whichever agent it happens to."""
    gc.collect()
    return time.process_time()


def tether_settings(protocol: str) -> AgentSettings:
    return AgentSettings(
        base_url="http://127.0.0.1:9/v1",  # never called: the model is scripted
        protocol=protocol,  # type: ignore[arg-type]
        max_iters=STEPS + 5,
        token_budget=10**7,
        approval_tools=[],
    )


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

    from tether.bench.agents.agent_executor import REACT_PROMPT

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
            started = _clock_start()
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


# --- 4. Concurrency ----------------------------------------------------------------------------


def _tether_graph(model: ScriptedChatModel, tool: Any) -> Any:
    return build_graph(tether_settings("native"), model=model, registry=ToolRegistry([tool]))


def _create_agent_graph(model: ScriptedChatModel, tool: Any) -> Any:
    from langchain.agents import create_agent

    return create_agent(model, tools=[tool])


def _floor_graph(model: ScriptedChatModel, tool: Any) -> Any:
    """A bare LangGraph loop: a model node and a tool node with no checks at all, natively
    async in async runs (the tool given says which), calling the model and the tool the
    plain LangChain way. What any agent on LangGraph and a LangChain chat model pays."""
    bound = model.bind_tools([tool])

    def route(state: MessagesState) -> str:
        return "tools" if state["messages"][-1].tool_calls else END  # type: ignore[attr-defined]

    def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    def call_tools(state: MessagesState) -> dict[str, Any]:
        calls = state["messages"][-1].tool_calls  # type: ignore[attr-defined]
        return {"messages": [tool.invoke(c) for c in calls]}

    async def acall_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    async def acall_tools(state: MessagesState) -> dict[str, Any]:
        calls = state["messages"][-1].tool_calls  # type: ignore[attr-defined]
        return {"messages": [await tool.ainvoke(c) for c in calls]}

    async def aroute(state: MessagesState) -> str:
        return route(state)

    run_async = tool.coroutine is not None
    builder = StateGraph(MessagesState)
    builder.add_node("model", acall_model if run_async else call_model)
    builder.add_node("tools", acall_tools if run_async else call_tools)
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", aroute if run_async else route, ["tools", END])
    builder.add_edge("tools", "model")
    return builder.compile()


CONCURRENT: dict[str, tuple[Callable[[ScriptedChatModel, Any], Any], dict[str, Any]]] = {
    "tether (native)": (_tether_graph, {"task": "look up"}),
    "create_agent": (_create_agent_graph, {"messages": [HumanMessage("look up")]}),
    "bare langgraph loop": (_floor_graph, {"messages": [HumanMessage("look up")]}),
}


def _graphs(agent: str, count: int, latency: float, steps: int, tool: Any) -> list[Any]:
    make = CONCURRENT[agent][0]
    model = ScriptedChatModel
    return [
        make(model(responses=tool_call_replies(steps), latency=latency), tool) for _ in range(count)
    ]


async def _run_all(agent: str, graphs: list[Any]) -> float:
    task = CONCURRENT[agent][1]
    started = time.perf_counter()
    await asyncio.gather(*(g.ainvoke(dict(task)) for g in graphs))
    return time.perf_counter() - started


def concurrency(
    repeats: int, count: int = 64, latency: float = 0.05, steps: int = 5
) -> dict[str, Any]:
    """Each agent alike: graphs built before the clock starts; an async tool for async runs
    (as an async agent has), the sync twin for sync runs. Rounds are interleaved (agent A,
    B, C, A, B, C...) and each figure is the median of ``repeats`` rounds."""
    for agent in CONCURRENT:  # warm-up: imports, first compile
        asyncio.run(_run_all(agent, _graphs(agent, 1, latency, steps, alookup)))
    rounds: dict[str, list[dict[str, float]]] = {agent: [] for agent in CONCURRENT}
    for _ in range(repeats):
        for agent in CONCURRENT:
            rounds[agent].append(_concurrency_round(agent, count, latency, steps))
    medians = {
        agent: {key: round(statistics.median(r[key] for r in runs), 3) for key in runs[0]}
        for agent, runs in rounds.items()
    }
    for figures in medians.values():
        figures["overlap"] = round(figures["overlap"], 1)
    return {"runs": count, "model_latency_s": latency, "steps_per_run": steps, **medians}


def _concurrency_round(agent: str, count: int, latency: float, steps: int) -> dict[str, float]:
    single = asyncio.run(_run_all(agent, _graphs(agent, 1, latency, steps, alookup)))
    graphs = _graphs(agent, count, latency, steps, alookup)
    cpu0 = _clock_start()
    many = asyncio.run(_run_all(agent, graphs))
    async_cpu = (time.process_time() - cpu0) / (count * steps) * 1000

    graphs = _graphs(agent, count, 0.0, steps, alookup)
    cpu0 = _clock_start()
    asyncio.run(_run_all(agent, graphs))
    async_cpu_no_wait = (time.process_time() - cpu0) / (count * steps) * 1000

    graphs = _graphs(agent, count, 0.0, steps, lookup)
    task = CONCURRENT[agent][1]
    cpu0 = _clock_start()
    for graph in graphs:
        graph.invoke(dict(task))
    sync_cpu = (time.process_time() - cpu0) / (count * steps) * 1000
    return {
        "one_run_wall_s": single,
        "all_runs_wall_s": many,
        "overlap": count * single / many,
        "async_cpu_ms_per_step": async_cpu,
        "async_cpu_ms_per_step_no_latency": async_cpu_no_wait,
        "sync_cpu_ms_per_step": sync_cpu,
    }


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
