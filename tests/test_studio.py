"""`langgraph dev` (the Studio server) loads tether's graph, shows its settings, and runs it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tether import AgentSettings
from tether_world import World
from tether_world.demo import SEED_FLOW_REPLIES, SEED_TASK

from tests.contract.vllm_stub import RunningStub, StubConfig, serve_stub

pytestmark = pytest.mark.server
ROOT = Path(__file__).parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def world_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the served tether-world graph keeps its world (TETHER_DATA_DIR)."""
    return tmp_path_factory.mktemp("studio-world")


@pytest.fixture(scope="module")
def studio(world_dir: Path) -> Iterator[str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_")}
    langgraph = Path(sys.executable).parent / "langgraph"
    command = [str(langgraph), "dev", "--port", str(port), "--host", "127.0.0.1"]
    server = subprocess.Popen(
        [*command, "--no-browser", "--no-reload"],
        cwd=ROOT,
        env=env | {"TETHER_DATA_DIR": str(world_dir)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/ok", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert server.poll() is None, "langgraph dev exited"
            time.sleep(0.1)
        else:
            pytest.fail("langgraph dev did not come up within 120 s")
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


def assistant_id(studio: str) -> str:
    found = httpx.post(f"{studio}/assistants/search", json={"graph_id": "tether"}, timeout=60)
    return str(found.json()[0]["assistant_id"])


def test_graph_is_served_with_readable_nodes_and_editable_settings(studio: str) -> None:
    assistant = assistant_id(studio)
    drawn = httpx.get(f"{studio}/assistants/{assistant}/graph", timeout=60).json()
    nodes = {node["id"] for node in drawn["nodes"]}
    assert {"start", "think", "act", "approve", "refuse"} <= nodes
    schemas = httpx.get(f"{studio}/assistants/{assistant}/schemas", timeout=60).json()
    settings = schemas["context_schema"]["properties"]
    assert {"token_budget", "max_steps", "breaker_failures", "approval_tools"} <= set(settings)


def test_the_demo_world_graph_is_served_too(studio: str) -> None:
    found = httpx.post(f"{studio}/assistants/search", json={"graph_id": "tether-world"}, timeout=60)
    assert found.json(), "tether-world is not registered"


def test_a_run_from_studio_uses_the_edited_settings(studio: str) -> None:
    body = {
        "assistant_id": "tether",
        "input": {"task": "Say hello."},
        "context": {"max_steps": 1, "max_tokens": 16},
    }
    state = httpx.post(f"{studio}/runs/wait", json=body, timeout=180).json()
    assert state["status"] in {"completed", "max_steps", "failed", "no_progress"}
    asked = "at the cap" in state["reason"]  # the step cap's one last call, for an answer
    assert state["steps"] == 1 + asked
    assert state["usage"]["total_tokens"] > 0


def test_the_sdk_client_sees_an_input_form_and_the_settings_in_force(studio: str) -> None:
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=studio)
    schemas = client.assistants.get_schemas(assistant_id(studio))
    assert schemas["input_schema"]["properties"]["task"]["type"] == "string"
    assert "status" in schemas["state_schema"]["properties"]
    settings = schemas["context_schema"]["properties"]
    assert settings["max_steps"]["default"] == AgentSettings().max_steps
    assert settings["token_budget"]["default"] == AgentSettings().token_budget


def test_streamed_messages_are_the_models_tokens_not_the_prompt(studio: str) -> None:
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=studio)
    thread = client.threads.create()
    kinds: set[str] = set()
    for part in client.runs.stream(
        thread["thread_id"],
        "tether",
        input={"task": "Say hello."},
        context={"max_steps": 1, "max_tokens": 8},
        stream_mode="messages-tuple",
    ):
        if part.event == "messages":
            message, meta = part.data
            kinds.add(message["type"])
            assert meta["langgraph_node"] == "think"
    assert kinds and kinds <= {"AIMessageChunk", "ai"}  # no system or human prompt messages


# --- the demo world on the server: approval, resume, and the server's store -----------------
HEALTH = ["tether", "tool_health"]


@pytest.fixture
def model() -> Iterator[RunningStub]:
    """The vLLM-shaped stub replaying the seed flow; runs point at it through their context."""
    with serve_stub(StubConfig(script=list(SEED_FLOW_REPLIES))) as running:
        yield running


def recorded_calls(client: Any, tool: str) -> int:
    """Calls of ``tool`` in the server's store (it persists between server starts)."""
    item = client.store.get_item(HEALTH, tool)
    return 0 if item is None else int(item["value"].get("calls", 0))


def world_run(client: Any, thread: str, model: RunningStub, **payload: Any) -> dict[str, Any]:
    context = {"base_url": model.base_url, "protocol": "react"}
    done = client.runs.wait(thread, "tether-world", context=context, **payload)
    return dict(client.threads.get_state(thread)) if done is not None else {}


def test_a_world_run_pauses_resumes_and_keeps_tool_health_in_the_servers_store(
    studio: str, model: RunningStub, world_dir: Path
) -> None:
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=studio)
    before = {tool: recorded_calls(client, tool) for tool in ("query_order", "pay_order")}
    thread = client.threads.create()["thread_id"]
    paused = world_run(client, thread, model, input={"task": SEED_TASK})
    assert paused["next"] == ["approve"]  # waiting for the operator, in the server's checkpointer
    [interrupt] = paused["interrupts"]
    assert interrupt["value"]["action_requests"][0]["name"] == "pay_order"
    assert client.store.get_item(HEALTH, "query_order")["value"]["state"] == "closed"
    assert recorded_calls(client, "query_order") == before["query_order"] + 1
    assert recorded_calls(client, "pay_order") == before["pay_order"]  # not run yet

    answer = {"decisions": [{"type": "approve"}]}
    done = world_run(client, thread, model, command={"resume": answer})
    assert done["next"] == [] and done["values"]["status"] == "completed"
    assert recorded_calls(client, "pay_order") == before["pay_order"] + 1
    with World.create(world_dir) as world:
        assert [p["order_id"] for p in world.payments()].count("ORD-2024-001") == 1


def test_a_tool_paused_in_the_servers_store_is_refused_without_running(
    studio: str, model: RunningStub
) -> None:
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=studio)
    now = time.time()
    paused = {"state": "open", "failures": [now] * 5, "last_error": "HTTP 503", "opened_at": now}
    client.store.put_item(HEALTH, "query_order", paused)
    try:
        model.config.script[:] = [SEED_FLOW_REPLIES[0], "Thought: no\nFinal Answer: unknown"]
        thread = client.threads.create()["thread_id"]
        state = world_run(client, thread, model, input={"task": SEED_TASK})["values"]
        [entry] = state["tool_buffer"]
        assert entry["tool"] == "query_order"
        assert entry["result"]["meta"]["error_type"] == "refused"
        assert entry["result"]["message"].startswith("query_order is paused and was not called")
        assert client.store.get_item(HEALTH, "query_order")["value"] == paused  # nothing ran
    finally:
        client.store.delete_item(HEALTH, "query_order")
