"""ReAct parsing: repairs of real drift, and errors that are never silent."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage

from tether.llm.parsing import fingerprint, parse_arguments, parse_native, parse_react


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"order_id": "ORD-2024-001"}', {"order_id": "ORD-2024-001"}),
        ("{“order_id”: “ORD-2024-001”}", {"order_id": "ORD-2024-001"}),
        ("{‘order_id’: ‘ORD-2024-001’}", {"order_id": "ORD-2024-001"}),
        (
            '{"order_id"："ORD-2024-001"，"coupon": "VIP"}',
            {"order_id": "ORD-2024-001", "coupon": "VIP"},
        ),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('{"a": 1, "b": [1, 2,],}', {"a": 1, "b": [1, 2]}),
        ("{'a': 'x', 'b': true}", {"a": "x", "b": True}),
        ("{}", {}),
    ],
)
def test_arguments_are_repaired(text: str, expected: dict[str, object]) -> None:
    assert parse_arguments(text) == expected


def test_full_width_punctuation_inside_values_is_kept() -> None:
    parsed = parse_arguments('{"address"："北京市，朝阳区：三里屯"}')
    assert parsed == {"address": "北京市，朝阳区：三里屯"}


def test_escaped_quote_inside_value_survives_repair() -> None:
    parsed = parse_arguments('{"note"："say \\"hi\\"，ok"}')
    assert parsed == {"note": 'say "hi"，ok'}


@pytest.mark.parametrize("text", ["not json", "[1, 2]", "", "{"])
def test_unreadable_arguments_raise(text: str) -> None:
    with pytest.raises(ValueError, match="Action Input"):
        parse_arguments(text)


def test_action_reply() -> None:
    proposal = parse_react(
        "Thought: look it up\nAction: `query_order`\nAction Input: {“order_id”: “ORD-2024-001”}"
    )
    assert proposal["kind"] == "action"
    assert proposal["tool"] == "query_order"
    assert proposal["arguments"] == {"order_id": "ORD-2024-001"}
    assert proposal["thought"] == "look it up"


def test_final_answer_reply() -> None:
    proposal = parse_react("Thought: done\nFinal Answer: 已支付 254.15 元")
    assert proposal == {
        "kind": "final",
        "thought": "done",
        "answer": "已支付 254.15 元",
        "raw": "Thought: done\nFinal Answer: 已支付 254.15 元",
    }


def test_action_before_imagined_observation_and_answer_wins() -> None:
    proposal = parse_react(
        'Thought: t\nAction: q\nAction Input: {"a": 1}\nObservation: 3\nFinal Answer: 3'
    )
    assert proposal["kind"] == "action"


def test_full_width_colons_in_labels() -> None:
    proposal = parse_react('Thought：查订单\nAction：query_order\nAction Input：{"order_id": "X"}')
    assert proposal["kind"] == "action" and proposal["tool"] == "query_order"


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("Thought: I need to check the order status...", "no Action or Final Answer"),
        ("Thought: x\nAction: q", "no Action Input"),
        ("Thought: x\nAction: q\nAction Input: oops", "not a JSON object"),
        ("", "no Action or Final Answer"),
    ],
)
def test_invalid_replies_say_why(text: str, error: str) -> None:
    proposal = parse_react(text)
    assert proposal["kind"] == "invalid"
    assert error in proposal["error"]


def test_fingerprint_ignores_key_order() -> None:
    assert fingerprint("t", {"a": 1, "b": 2}) == fingerprint("t", {"b": 2, "a": 1})
    assert fingerprint("t", {"a": 1}) != fingerprint("t", {"a": 2})


def test_native_tool_call_and_text() -> None:
    call = AIMessage(
        "", tool_calls=[{"name": "q", "args": {"a": 1}, "id": "1", "type": "tool_call"}]
    )
    assert parse_native(call)["tool"] == "q"
    assert parse_native(AIMessage("answer"))["kind"] == "final"
    assert parse_native(AIMessage(""))["kind"] == "invalid"
    broken = AIMessage(
        "",
        invalid_tool_calls=[
            {
                "name": "q",
                "args": "{oops",
                "id": "1",
                "error": "bad json",
                "type": "invalid_tool_call",
            }
        ],
    )
    assert "bad json" in parse_native(broken)["error"]
