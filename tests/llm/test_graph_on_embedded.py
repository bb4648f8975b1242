"""A whole run of the graph on the real embedded model (SmolLM2 under llama.cpp)."""

from __future__ import annotations

import pytest
from tether import AgentSettings, ToolRegistry, build_graph, tool
from tether.testing import run_traced

pytestmark = pytest.mark.server

STATUSES = {"completed", "partial", "failed", "max_steps", "no_progress"}


@tool
def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


@pytest.mark.timeout(400)  # two calls each; slow only when the 2 cores are shared
@pytest.mark.parametrize("protocol", [None, "react"])  # None: the default, json_schema
def test_a_run_ends_with_a_status_and_server_usage(protocol: str | None) -> None:
    chosen = {} if protocol is None else {"protocol": protocol}
    settings = AgentSettings(**chosen, max_steps=2, max_tokens=64, request_timeout=180)
    graph = build_graph(settings, registry=ToolRegistry([add]))
    state, trace = run_traced(graph, {"task": "What is 2 + 3? Use the add tool."})
    assert state["status"] in STATUSES
    assert state["reason"]
    calls = [e["detail"] for e in trace if e["event"] == "model_call"]
    assert calls and all(c["usage_source"] == "server" for c in calls)
    assert state["usage"]["total_tokens"] == sum(c["usage"]["total_tokens"] for c in calls) > 0
    if protocol is None:  # the schema's grammar holds every reply to a JSON object
        assert all(c["raw"].lstrip().startswith("{") for c in calls), calls
