"""json_schema protocol: a schema built from the current tools, and its parser."""

from __future__ import annotations

from typing import Any

import pytest
from tether import tool
from tether.llm.structured import action_schema, parse_json_action

from tests.scripts import final


@tool
def query_order(order_id: str) -> str:
    """Look an order up."""
    return f"order {order_id}: pending"


@tool
def calculate(expression: str) -> str:
    """Arithmetic."""
    return expression


def test_schema_names_each_tool_as_a_constant_with_its_arguments() -> None:
    schema = action_schema([query_order, calculate])
    choices = schema["properties"]["action"]["anyOf"]
    consts = [c["properties"].get("tool", {}).get("const") for c in choices]
    assert consts == ["query_order", "calculate", None]
    args = choices[0]["properties"]["arguments"]
    assert args["required"] == ["order_id"]
    assert choices[-1]["required"] == ["final_answer"]


def test_schema_without_tools_allows_only_an_answer() -> None:
    choices = action_schema([])["properties"]["action"]["anyOf"]
    assert len(choices) == 1 and "final_answer" in choices[0]["properties"]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ('{"thought": "t", "action": {"tool": "q", "arguments": {"a": 1}}}', "action"),
        ('{"thought": "t", "action": {"final_answer": "42"}}', "final"),
        ('{"thought": "t", "action": {"tool": "q", "arguments": [1]}}', "invalid"),
        ('{"thought": "t"}', "invalid"),
        ("plain words", "invalid"),
    ],
)
def test_parse_json_action(text: str, kind: str) -> None:
    assert parse_json_action(text)["kind"] == kind


def test_graph_sends_the_schema_as_response_format(run_script: Any) -> None:
    replies = [
        '{"thought": "look", "action": {"tool": "query_order", "arguments": '
        '{"order_id": "ORD-2024-001"}}}',
        '{"thought": "done", "action": {"final_answer": "pending"}}',
    ]
    state, model = run_script(replies, tools=[query_order], protocol="json_schema")
    assert state["status"] == "completed" and state["answer"] == "pending"
    sent = model.calls[0].kwargs["response_format"]
    assert sent["type"] == "json_schema"
    assert sent["json_schema"]["schema"] == action_schema([query_order])
    assert state["tool_buffer"][0]["result"]["data"] == "order ORD-2024-001: pending"


def test_react_text_under_json_schema_is_a_parse_failure(run_script: Any) -> None:
    state, _ = run_script(
        [final("x"), final("x")], protocol="json_schema", max_steps=2, cap_answer=False
    )
    assert state["history"][0]["kind"] == "parse_failure"
