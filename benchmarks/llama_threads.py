"""Prompt processing and generation speed of the embedded llama.cpp model, per thread count.

The embedded server picks its threads from the cores left idle when it starts
(``tether_local.default_threads``). This script shows what that choice is worth: for
each thread count it starts a server, sends the first step of ``make run`` (the small-model
profile's system prompt and JSON-schema grammar) once cold and once with the prompt cached,
and prints llama.cpp's own timings. Run it on an idle machine, and again with another job
keeping a core busy.

    uv run python benchmarks/llama_threads.py                 # 1 and 2 threads
    uv run python benchmarks/llama_threads.py --threads 1,2,4 --max-tokens 64
"""

from __future__ import annotations

import argparse
import json
import tempfile
from typing import Any

import httpx
from langchain_core.messages import convert_to_openai_messages
from tether.decisions.offer import Offer
from tether.decisions.toolpick import select_tools
from tether.llm.protocols import PROTOCOLS
from tether.llm.structured import response_format
from tether.memory.render import PromptFrame, render_prompt
from tether.memory.tokens import TiktokenCounter
from tether_local import EmbeddedServer, idle_cores
from tether_world import create_world

TASK = "查询订单 ORD-2024-001 的状态并计算折扣"


def first_step_request(max_tokens: int) -> dict[str, Any]:
    """The chat request of a small-profile run's first step on the demo world."""
    with tempfile.TemporaryDirectory() as data_dir:
        world = create_world(data_dir)
        tools = select_tools(world.tools(), TASK, 4, (), ranked=True)
        world.close()
    system = PROTOCOLS["json_schema"].system_prompt(Offer(tuple(tools), small=True))
    prompt = render_prompt(
        frame=PromptFrame(system, 0),
        task=TASK,
        reasoning=[],
        results=[],
        hints=[],
        budget=10**6,
        counter=TiktokenCounter(),
    )
    return {
        "messages": convert_to_openai_messages(prompt.messages),
        "temperature": 0,
        "max_tokens": max_tokens,
        "response_format": response_format(tools, small=True),
    }


def measure(threads: int, request: dict[str, Any]) -> list[dict[str, Any]]:
    """One cold and one cached call on a fresh server with ``threads`` threads."""
    rows = []
    with EmbeddedServer(threads=threads) as server:
        for label in ("cold", "cached"):
            body = {"model": server.model_name or "local", **request}
            reply = httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=300)
            timings = reply.json().get("timings", {})
            rows.append(
                {
                    "threads": threads,
                    "call": label,
                    "prompt_tokens": timings.get("prompt_n"),
                    "prompt_tokens_per_s": round(timings.get("prompt_per_second", 0.0), 1),
                    "generated_tokens": timings.get("predicted_n"),
                    "generated_tokens_per_s": round(timings.get("predicted_per_second", 0.0), 1),
                }
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    parser.add_argument("--max-tokens", type=int, default=128)
    args = parser.parse_args()
    idle = idle_cores()
    print(json.dumps({"idle_cores_at_start": round(idle, 2)}))
    request = first_step_request(args.max_tokens)
    for threads in (int(t) for t in args.threads.split(",")):
        for row in measure(threads, request):
            print(json.dumps(row))


if __name__ == "__main__":
    main()
