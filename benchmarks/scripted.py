"""What the speed benchmarks share: a trivial tool (sync and async twins), scripted replies
with fixed usage (so no agent pays for token counting it did not ask for), tether's
settings for them, and a CPU clock that starts after a full garbage collection."""

from __future__ import annotations

import gc
import time

from langchain_core.messages import AIMessage
from tether import AgentSettings, tool

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


def clock_start() -> float:
    """Process CPU time, after a full garbage collection: building the graphs before the
    clock leaves objects whose collection (a full pass over the heap, about 0.1 s with 64
    graphs) would otherwise land inside the timed runs, on whichever agent it happens to."""
    gc.collect()
    return time.process_time()


def tether_settings(protocol: str) -> AgentSettings:
    return AgentSettings(
        base_url="http://127.0.0.1:9/v1",  # never called: the model is scripted
        protocol=protocol,  # type: ignore[arg-type]
        max_steps=STEPS + 5,
        token_budget=10**7,
        approval_tools=[],
    )
