"""The whole graph against a vLLM-shaped server over HTTP: usage, /tokenize, tool_calls."""

from __future__ import annotations

import socket
import time
from typing import Any

import pytest
from tether import AgentSettings, ModelCallError, ToolRegistry, build_graph, tool
from tether.testing import run_traced

from tests.contract.vllm_stub import RunningStub


@tool
def query_order(order_id: str, note: str = "") -> str:
    """Look an order up."""
    return f"{order_id}: pending"


def run(base_url: str, **settings: Any) -> dict[str, Any]:
    graph = build_graph(
        AgentSettings(base_url=base_url, model="Qwen2.5-7B-Instruct", **settings),
        registry=ToolRegistry([query_order]),
    )
    state, trace = run_traced(graph, {"task": "查询订单 ORD-2024-001"})
    return {**state, "trace": trace}


def test_server_usage_is_what_the_budget_spends(stub: RunningStub) -> None:
    state = run(stub.base_url, max_steps=1)
    calls = [e["detail"] for e in state["trace"] if e["event"] == "model_call"]
    assert len(calls) == 2  # the step, then the answer asked for at the cap
    assert all(call["usage_source"] == "server" for call in calls)
    assert state["usage"]["total_tokens"] == sum(c["usage"]["total_tokens"] for c in calls) > 0
    assert stub.config.tokenize_calls > 0  # the prompt estimate asked the server's tokenizer
    assert state["status"] == "max_steps"


def test_missing_usage_is_counted_and_said(stub_without_usage: RunningStub) -> None:
    state = run(stub_without_usage.base_url, max_steps=1)
    events = [e["event"] for e in state["trace"]]
    assert "usage_counted" in events
    assert state["usage"]["total_tokens"] > 0


def test_native_protocol_runs_the_servers_tool_call(stub: RunningStub) -> None:
    state = run(stub.base_url, max_steps=1, protocol="native")
    assert state["tool_buffer"][0]["tool"] == "query_order"
    assert state["tool_buffer"][0]["arguments"]["note"] == "查询"
    assert state["tool_buffer"][0]["result"]["data"] == "ORD-2024-001: pending"
    assert stub.config.requests[0]["tools"][0]["function"]["name"] == "query_order"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_unreachable_endpoint_is_a_clear_error_quickly() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    started = time.monotonic()
    with pytest.raises(ModelCallError, match=f"cannot reach the model at {url}"):
        run(url, request_timeout=3)
    assert time.monotonic() - started < 10
