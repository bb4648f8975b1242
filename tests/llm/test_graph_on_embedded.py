"""A whole run of the graph on the real embedded model (SmolLM2 under llama.cpp)."""

from __future__ import annotations

import pytest
from tether import AgentSettings, ToolRegistry, build_graph, tool
from tether.settings import EMBEDDED_CONTEXT
from tether.testing import run_traced
from tether_local import ensure_embedded_server

pytestmark = pytest.mark.server


@pytest.fixture(scope="module", autouse=True)
def _one_thread() -> None:
    """The shared server the graph asks for, started as the graph would start it but with one
    thread: the suite runs a test file per core, and two llama.cpp threads wait for each
    other whenever the other worker takes the second core."""
    ensure_embedded_server(ctx_size=EMBEDDED_CONTEXT, threads=1)


STATUSES = {"completed", "partial", "failed", "max_steps", "no_progress"}


@tool
def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


@pytest.mark.timeout(400)  # two calls each; slow only when the 2 cores are shared
@pytest.mark.parametrize(
    ("protocol", "max_tokens"),
    [
        (None, 64),  # the default, json_schema: 64 tokens hold a whole action (about 57)
        ("react", 32),  # SmolLM2's ReAct text holds no action at 64 tokens either
    ],
)
def test_a_run_ends_with_a_status_and_server_usage(protocol: str | None, max_tokens: int) -> None:
    chosen = {} if protocol is None else {"protocol": protocol}
    settings = AgentSettings(**chosen, max_steps=2, max_tokens=max_tokens, request_timeout=180)
    graph = build_graph(settings, registry=ToolRegistry([add]))
    state, trace = run_traced(graph, {"task": "What is 2 + 3? Use the add tool."})
    assert state["status"] in STATUSES
    assert state["reason"]
    calls = [e["detail"] for e in trace if e["event"] == "model_call"]
    assert calls and all(c["usage_source"] == "server" for c in calls)
    assert state["usage"]["total_tokens"] == sum(c["usage"]["total_tokens"] for c in calls) > 0
    if protocol is None:  # the schema's grammar holds every reply to a JSON object
        assert all(c["raw"].lstrip().startswith("{") for c in calls), calls
