"""How often each output protocol yields a usable step on the embedded SmolLM2.

Each sample is one real model call made by tether's own graph (``max_steps=1``) on the design
note's task, with the three seed tools (query_order, compute_discount, pay_order) from the
demo world. A sample counts as *parsed* when tether read an action or a final answer from
the reply, as a *tool call* when that was an action, and as *valid* when it is a final answer
or a call whose tool exists and whose arguments pass the tool's schema. SmolLM2's chat
template has no tool support, so under ``native`` it answers in plain text, which that
protocol reads as a final answer: parsed, but no tool is ever called.

    uv run python benchmarks/parse_rate.py                 # 20 calls per protocol
    uv run python benchmarks/parse_rate.py --calls 30 --protocols react,json_schema
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from typing import Any

from tether import AgentSettings, ToolRegistry, build_graph
from tether_world import World

TASK = "查询订单 ORD-2024-001 的状态并计算折扣，然后付款"
SEED_TOOLS = ("query_order", "compute_discount", "pay_order")


def sample(protocol: str, registry: ToolRegistry, max_tokens: int) -> dict[str, Any]:
    """One model call through the graph; what tether made of the reply."""
    settings = AgentSettings(
        protocol=protocol,
        max_steps=1,
        max_tokens=max_tokens,
        approval_tools=[],
        temperature=0.7,
        request_timeout=600,
    )
    state = build_graph(settings, registry=registry).invoke({"task": TASK})
    record = state["history"][-1]
    proposal = state["proposal"] or {}
    valid = record["kind"] == "final" or (
        proposal.get("kind") == "action"
        and registry.check_arguments(proposal["tool"], proposal["arguments"]) is None
    )
    return {
        "kind": record["kind"],
        "parsed": proposal.get("kind") != "invalid",
        "action": proposal.get("kind") == "action",
        "valid": valid,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--protocols", default="react,json_schema,native")
    parser.add_argument("--max-tokens", type=int, default=160)
    args = parser.parse_args()

    with World.temporary() as world:
        full = world.registry()
        registry = ToolRegistry([t for t in full.tools() if t.name in SEED_TOOLS])
        rows = []
        for protocol in args.protocols.split(","):
            started = time.perf_counter()
            results = [sample(protocol, registry, args.max_tokens) for _ in range(args.calls)]
            seconds = time.perf_counter() - started
            kinds = Counter(r["kind"] for r in results)
            parsed = sum(r["parsed"] for r in results)
            valid = sum(r["valid"] for r in results)
            actions = sum(r["action"] for r in results)
            rows.append((protocol, parsed, actions, valid, args.calls, seconds, dict(kinds)))
            print(
                f"{protocol}: parsed {parsed}/{args.calls}, valid {valid}/{args.calls}", flush=True
            )

    print("\n| protocol | parsed | tool calls | valid step | seconds | step kinds |")
    print("|---|---:|---:|---:|---:|---|")
    for protocol, parsed, actions, valid, calls, seconds, kinds in rows:
        print(
            f"| `{protocol}` | {parsed}/{calls} | {actions}/{calls} | {valid}/{calls} "
            f"| {seconds:.0f} | {kinds} |"
        )


if __name__ == "__main__":
    main()
