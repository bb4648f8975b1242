"""Look before answering: until a tool has run, a task that names something a read tool can
look up gets no final answer offered, in the schema (json_schema) or by asking for a call
(native); react cannot hold a reply to that, and is left to the final-answer check."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from pydantic import BaseModel, Field
from tether import AgentSettings, ToolRegistry, build_graph, tool
from tether.llm.protocols import LOOK_FIRST_NOTE
from tether.testing import ScriptedChatModel, run_traced

ORDER = "ORD-2024-001"


class OrderArgs(BaseModel):
    order_id: str = Field(pattern=r"^ORD-\d{4}-\d{3,}$")


@tool(args_schema=OrderArgs)
def query_order(order_id: str) -> dict[str, Any]:
    """Look up an order's status."""
    return {"order_id": order_id, "status": "shipped"}


def _json_call() -> str:
    return json.dumps(
        {"thought": "look", "action": {"tool": "query_order", "arguments": {"order_id": ORDER}}}
    )


def _json_final(text: str) -> str:
    return json.dumps({"thought": "done", "action": {"final_answer": text}})


def _run(replies: list[Any], task: str, **settings: Any) -> tuple[dict[str, Any], Any]:
    model = ScriptedChatModel(responses=replies)
    options = {"protocol": "json_schema", "check_final": False, "look_first": True} | settings
    graph = build_graph(AgentSettings(**options), model=model, registry=ToolRegistry([query_order]))
    state, _ = run_traced(graph, {"task": task})
    return state, model


def _answer_offered(model: ScriptedChatModel, i: int) -> bool:
    schema = model.calls[i].kwargs["response_format"]["json_schema"]["schema"]
    branches = schema["properties"]["action"]["anyOf"]
    return any("final_answer" in branch["properties"] for branch in branches)


def _notes(model: ScriptedChatModel, i: int) -> str:
    return str(model.calls[i].messages[-1].content)


def test_no_answer_is_offered_until_the_lookup_the_task_names_has_run() -> None:
    state, model = _run([_json_call(), _json_final(f"{ORDER} is shipped")], f"Where is {ORDER}?")
    assert state["status"] == "completed"
    assert not _answer_offered(model, 0) and LOOK_FIRST_NOTE in _notes(model, 0)
    assert _answer_offered(model, 1) and LOOK_FIRST_NOTE not in _notes(model, 1)


@pytest.mark.parametrize(
    ("task", "settings"),
    [
        ("What is the capital of France?", {}),  # nothing a tool can look up
        (f"Where is {ORDER}?", {"look_first": False}),
    ],
)
def test_an_answer_is_offered_when_there_is_nothing_to_look_up_or_the_setting_is_off(
    task: str, settings: dict[str, Any]
) -> None:
    state, model = _run([_json_final("Paris")], task, **settings)
    assert state["status"] == "completed" and _answer_offered(model, 0)
    assert LOOK_FIRST_NOTE not in _notes(model, 0)


def test_native_asks_for_a_call_and_react_is_left_to_the_check() -> None:
    call = AIMessage(
        "", tool_calls=[{"name": "query_order", "args": {"order_id": ORDER}, "id": "c1"}]
    )
    _, native = _run(
        [call, AIMessage(f"{ORDER} is shipped")], f"Where is {ORDER}?", protocol="native"
    )
    assert native.calls[0].kwargs.get("tool_choice") == "required"
    assert "tool_choice" not in native.calls[1].kwargs
    react_reply = f'Thought: look\nAction: query_order\nAction Input: {{"order_id": "{ORDER}"}}'
    react_final = f"Thought: done\nFinal Answer: {ORDER} is shipped"
    _, react = _run([react_reply, react_final], f"Where is {ORDER}?", protocol="react")
    assert LOOK_FIRST_NOTE not in _notes(react, 0)


def test_a_server_that_ignores_the_schema_still_meets_the_check() -> None:
    """An answer written anyway (a server that does not enforce the schema) is the check's
    business: it is sent back once, then taken as written."""
    replies = [_json_final("Done."), _json_final("Done.")]
    state, model = _run(replies, f"Where is {ORDER}?", check_final=True)
    assert len(model.calls) == 2 and state["status"] == "completed"
    assert "query_order" in _notes(model, 1)


def test_unset_it_looks_first_under_the_small_model_profile_only() -> None:
    """A server model in a conversation may ask the user first (its policy can require it);
    the embedded small model answers before looking, so the profile holds it to a lookup."""
    task = f"Where is {ORDER}?"
    _, server = _run([_json_final("Which order do you mean?")], task, look_first=None)
    assert _answer_offered(server, 0)
    replies = [_json_call(), _json_final(f"{ORDER} is shipped")]
    _, small = _run(replies, task, look_first=None, small_model=True)
    assert not _answer_offered(small, 0)
