"""Many runs at once: 64 ``ainvoke`` runs against a scripted model that waits 50 ms a call,
side by side in one process, for tether, LangChain's ``create_agent``, a bare LangGraph loop
(a model node and a tool node with no checks, calling the model and the tool the plain
LangChain way) and LangGraph alone (the same two nodes doing nothing but wait: no chat
model, no tool, no messages).

Per agent, each figure the median of ``--repeats`` interleaved rounds (agent A, B, C, A...):

- overlap: 64 x one run's wall time / the 64 runs' wall time;
- CPU per step of those 64 runs. One event loop runs on one core, so the 64 runs' wall time
  lies between steps x max(50 ms, 64 x CPU per step), waits and work fully interleaved, and
  steps x (50 ms + 64 x CPU per step), runs in lock-step: started together, they wait
  together, and while they work nothing waits. LangGraph alone, with nodes that do nothing,
  shows the overlap no agent built on it can beat;
- CPU per step of the same runs without the wait, async (``ainvoke``, all at once) against
  sync (``invoke``, one after another), measured in alternating order; async / sync is taken
  within each round, then the median and range over rounds are reported.

    uv run python benchmarks/concurrency.py --repeats 7
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypedDict

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from scripted import alookup, clock_start, lookup, tether_settings, tool_call_replies
from tether import ToolRegistry, build_graph
from tether.testing import ScriptedChatModel

Nodes = tuple[Callable[..., Any], Callable[..., Any]]


def two_node_loop(
    schema: type[Any], route: Callable[[Any], str], nodes: Nodes, run_async: bool
) -> Any:
    """model -> (tools -> model)* -> end, over a (model, tools) pair of node functions. Async
    runs get an async edge too, so nothing hops to a worker thread."""

    async def aroute(state: Any) -> str:
        return route(state)

    builder = StateGraph(schema)
    builder.add_node("model", nodes[0])
    builder.add_node("tools", nodes[1])
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", aroute if run_async else route, ["tools", END])
    builder.add_edge("tools", "model")
    return builder.compile()


def tether_graph(steps: int, latency: float, tool: Any) -> Any:
    model = ScriptedChatModel(responses=tool_call_replies(steps), latency=latency)
    return build_graph(tether_settings("native"), model=model, registry=ToolRegistry([tool]))


def create_agent_graph(steps: int, latency: float, tool: Any) -> Any:
    from langchain.agents import create_agent

    model = ScriptedChatModel(responses=tool_call_replies(steps), latency=latency)
    return create_agent(model, tools=[tool])


def bare_loop_graph(steps: int, latency: float, tool: Any) -> Any:
    """A model node and a tool node with no checks at all, natively async in async runs (the
    tool given says which), calling the model and the tool the plain LangChain way: what any
    agent on LangGraph and a LangChain chat model pays."""
    model = ScriptedChatModel(responses=tool_call_replies(steps), latency=latency)
    bound = model.bind_tools([tool])

    def route(state: MessagesState) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else END

    def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    def tool_calls(state: MessagesState) -> list[Any]:
        last = state["messages"][-1]
        return list(last.tool_calls) if isinstance(last, AIMessage) else []

    def call_tools(state: MessagesState) -> dict[str, Any]:
        return {"messages": [tool.invoke(c) for c in tool_calls(state)]}

    async def acall_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    async def acall_tools(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await tool.ainvoke(c) for c in tool_calls(state)]}

    run_async = tool.coroutine is not None
    nodes = (acall_model, acall_tools) if run_async else (call_model, call_tools)
    return two_node_loop(MessagesState, route, nodes, run_async)


class Count(TypedDict, total=False):
    steps: int


def langgraph_alone_graph(steps: int, latency: float, tool: Any) -> Any:
    """The same two-node loop doing nothing but wait and count: the cost of LangGraph's own
    step, below which no agent built on it can go."""

    def model(state: Count) -> Count:
        if latency:
            time.sleep(latency)
        return {"steps": state.get("steps", 0) + 1}

    async def amodel(state: Count) -> Count:
        if latency:
            await asyncio.sleep(latency)
        return {"steps": state.get("steps", 0) + 1}

    def tools(state: Count) -> Count:
        return {}

    async def atools(state: Count) -> Count:
        return {}

    def route(state: Count) -> str:
        return "tools" if state["steps"] < steps else END

    run_async = tool.coroutine is not None
    nodes = (amodel, atools) if run_async else (model, tools)
    return two_node_loop(Count, route, nodes, run_async)


AGENTS: dict[str, tuple[Callable[[int, float, Any], Any], Callable[[], dict[str, Any]]]] = {
    "tether (native)": (tether_graph, lambda: {"task": "look up"}),
    "create_agent": (create_agent_graph, lambda: {"messages": [HumanMessage("look up")]}),
    "bare langgraph loop": (bare_loop_graph, lambda: {"messages": [HumanMessage("look up")]}),
    "langgraph alone": (langgraph_alone_graph, lambda: {"steps": 0}),
}


@dataclass(frozen=True)
class Shape:
    """How many runs at once, of how many steps, against a model that waits how long."""

    runs: int = 64
    steps: int = 5
    latency: float = 0.05


def graphs(agent: str, shape: Shape, count: int, latency: float, tool: Any) -> list[Any]:
    make = AGENTS[agent][0]
    return [make(shape.steps, latency, tool) for _ in range(count)]


def run_async(agent: str, built: list[Any], steps: int) -> tuple[float, float]:
    """Wall seconds and CPU ms per step of ``built`` run all at once with ``ainvoke``."""
    payload = AGENTS[agent][1]

    async def all_at_once() -> None:
        await asyncio.gather(*(graph.ainvoke(payload()) for graph in built))

    cpu = clock_start()
    started = time.perf_counter()
    asyncio.run(all_at_once())
    wall = time.perf_counter() - started
    return wall, (time.process_time() - cpu) / (len(built) * steps) * 1000


def run_sync(agent: str, built: list[Any], steps: int) -> float:
    """CPU ms per step of ``built`` run one after another with ``invoke``."""
    payload = AGENTS[agent][1]
    cpu = clock_start()
    for graph in built:
        graph.invoke(payload())
    return (time.process_time() - cpu) / (len(built) * steps) * 1000


def one_round(agent: str, shape: Shape, parity: int) -> dict[str, float]:
    """Graphs are built before each clock starts; async runs get the async tool (as an async
    agent has), sync runs its sync twin."""
    runs, steps = shape.runs, shape.steps
    single, _ = run_async(agent, graphs(agent, shape, 1, shape.latency, alookup), steps)
    many, cpu = run_async(agent, graphs(agent, shape, runs, shape.latency, alookup), steps)
    measures: dict[str, Callable[[], float]] = {
        "async": lambda: run_async(agent, graphs(agent, shape, runs, 0.0, alookup), steps)[1],
        "sync": lambda: run_sync(agent, graphs(agent, shape, runs, 0.0, lookup), steps),
    }
    order = ["async", "sync"] if parity % 2 == 0 else ["sync", "async"]
    no_wait = {name: measures[name]() for name in order}
    return {
        "one_run_wall_s": single,
        "all_runs_wall_s": many,
        "overlap": runs * single / many,
        "cpu_ms_per_step": cpu,
        "async_cpu_ms_per_step_no_wait": no_wait["async"],
        "sync_cpu_ms_per_step": no_wait["sync"],
        "async_over_sync": cpu / no_wait["sync"],
        "async_over_sync_no_wait": no_wait["async"] / no_wait["sync"],
    }


def concurrency(repeats: int, shape: Shape = Shape()) -> dict[str, Any]:
    for agent in AGENTS:  # warm-up: imports, first compile
        run_async(agent, graphs(agent, shape, 1, shape.latency, alookup), shape.steps)
        run_sync(agent, graphs(agent, shape, 1, 0.0, lookup), shape.steps)
    rounds: dict[str, list[dict[str, float]]] = {agent: [] for agent in AGENTS}
    for parity in range(repeats):
        for agent in AGENTS:
            rounds[agent].append(one_round(agent, shape, parity))
    report: dict[str, Any] = {
        "runs": shape.runs,
        "model_latency_s": shape.latency,
        "steps_per_run": shape.steps,
    }
    for agent, runs in rounds.items():
        figures: dict[str, Any] = {
            key: round(statistics.median(r[key] for r in runs), 3) for key in runs[0]
        }
        for key in ("async_over_sync", "async_over_sync_no_wait"):
            values = [r[key] for r in runs]
            figures[f"{key}_range"] = [round(min(values), 2), round(max(values), 2)]
        report[agent] = figures
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--runs", type=int, default=Shape.runs, help="runs at once")
    parser.add_argument("--steps", type=int, default=Shape.steps, help="steps per run")
    parser.add_argument(
        "--latency", type=float, default=Shape.latency, help="seconds each model call waits"
    )
    args = parser.parse_args()
    shape = Shape(runs=args.runs, steps=args.steps, latency=args.latency)
    print(json.dumps(concurrency(args.repeats, shape), indent=2))


if __name__ == "__main__":
    main()
