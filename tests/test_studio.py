"""`langgraph dev` (the Studio server) loads tether's graph, shows its settings, and runs it."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from tether import AgentSettings

pytestmark = pytest.mark.server
ROOT = Path(__file__).parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def studio() -> Iterator[str]:
    port = free_port()
    langgraph = Path(sys.executable).parent / "langgraph"
    command = [str(langgraph), "dev", "--port", str(port), "--host", "127.0.0.1"]
    server = subprocess.Popen(
        [*command, "--no-browser", "--no-reload"],
        cwd=ROOT,
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
            time.sleep(0.5)
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
    assert state["steps"] == 1
    assert state["status"] in {"completed", "max_steps", "failed", "no_progress"}
    assert state["usage"]["total_tokens"] > 0


def test_the_sdk_client_sees_an_input_form_and_the_settings_in_force(studio: str) -> None:
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=studio)
    schemas = client.assistants.get_schemas(assistant_id(studio))
    assert schemas["input_schema"]["properties"]["task"]["type"] == "string"
    assert "status" in schemas["state_schema"]["properties"]
    settings = schemas["context_schema"]["properties"]
    assert settings["max_steps"]["default"] == 10
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
