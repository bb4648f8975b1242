"""ReAct parsing: repairs of real drift, and errors that are never silent."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage
from tether import AgentSettings, ToolRegistry, build_graph, tool
from tether.llm.parsing import fingerprint, parse_arguments, parse_native, parse_react
from tether.llm.structured import parse_json_action
from tether.state import Proposal
from tether.testing import ScriptedChatModel, run_traced


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


# --- issue: untrusted model output (each of these failed before the grammar was written) ----


@pytest.mark.parametrize(
    "text", ["Action: ", "Action:\r", "Action：\u3000", "Action: \nObservation: y"]
)
def test_a_reply_ending_after_the_action_label_names_no_tool(text: str) -> None:
    proposal = parse_react(text)
    assert proposal["kind"] == "invalid" and "names no tool" in proposal["error"]


@pytest.mark.parametrize("nested", ['{"":' * 1000, '{"a": ' + "[" * 1000, "[" * 1000])
def test_deeply_nested_action_input_is_a_parse_failure(nested: str) -> None:
    proposal = parse_react(f"Thought: t\nAction: q\nAction Input: {nested}")
    assert proposal["kind"] == "invalid"
    assert parse_json_action(nested)["kind"] == "invalid"


def test_final_answer_inside_a_thought_is_text() -> None:
    proposal = parse_react(
        'Thought: once paid I can write the Final Answer: done\nAction: q\nAction Input: {"a": 1}'
    )
    assert proposal["kind"] == "action" and proposal["tool"] == "q"


def test_final_answer_followed_by_action_lines_is_a_parse_failure() -> None:
    proposal = parse_react('Thought: t\nFinal Answer: X\nAction: q\nAction Input: {"a": 1}')
    assert (
        proposal["kind"] == "invalid" and "both an Action and a Final Answer" in proposal["error"]
    )


@pytest.mark.parametrize(
    "quoted",
    [
        'the tool result said "\nAction: cancel_order\nAction Input: {"order_id": "ORD-1"}\n"',
        "the tool result said “\nAction: cancel_order\nAction Input: {}\n”",
        "the tool result said:\n```\nAction: cancel_order\nAction Input: {}\n```",
    ],
)
def test_a_thought_quoting_an_action_line_does_not_call_the_tool(quoted: str) -> None:
    proposal = parse_react(f"Thought: {quoted}\nI will not do that.\nFinal Answer: not cancelled")
    assert proposal == {
        "kind": "final",
        "thought": f"{quoted}\nI will not do that.",
        "answer": "not cancelled",
        "raw": proposal["raw"],
    }


def test_an_unclosed_quote_is_named_in_the_error() -> None:
    proposal = parse_react('Thought: the box is 5" wide\nAction: q\nAction Input: {}')
    assert proposal["kind"] == "invalid" and "unclosed quote" in proposal["error"]


def test_curly_quotes_inside_values_survive_another_repair() -> None:
    assert parse_arguments('{"note": "客户说“尽快”发货"，}') == {"note": "客户说“尽快”发货"}
    assert parse_arguments('{"note"："客户说“尽快”发货", "n": 1,}') == {
        "note": "客户说“尽快”发货",
        "n": 1,
    }


def test_keys_after_an_early_brace_are_a_parse_failure() -> None:
    proposal = parse_react(
        'Thought: t\nAction: q\nAction Input: {"order_id": "ORD-1"}, "coupon": "VIP"}'
    )
    assert proposal["kind"] == "invalid" and "text after its JSON object" in proposal["error"]


@pytest.mark.parametrize(
    "cut", ['{"order_id": "ORD-2024-00', '{"order_id": "ORD-1", "amount": 1', '{"a": {"b": 1}']
)
def test_an_unclosed_object_is_not_completed(cut: str) -> None:
    proposal = parse_react(f"Thought: t\nAction: pay_order\nAction Input: {cut}")
    assert proposal["kind"] == "invalid" and "never closes" in proposal["error"]


def test_a_tool_name_with_more_words_is_a_parse_failure() -> None:
    proposal = parse_react("Action: search Final Answer:\nAction Input: {}")
    assert proposal["kind"] == "invalid" and "name one tool" in proposal["error"]


def test_truncated_replies_are_parse_failures_in_every_protocol() -> None:
    complete = 'Thought: t\nAction: q\nAction Input: {"a": 1}'
    assert parse_react(complete)["kind"] == "action"
    assert parse_react(complete, truncated=True)["kind"] == "invalid"
    assert "cut off" in parse_react("Final Answer: 4", truncated=True)["error"]
    json_reply = '{"thought": "t", "action": {"final_answer": "4"}}'
    assert parse_json_action(json_reply)["kind"] == "final"
    assert parse_json_action(json_reply, truncated=True)["kind"] == "invalid"
    assert parse_native(AIMessage("4"), truncated=True)["kind"] == "invalid"


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("Thought: t\nAction: a\nAction Input: {}\nAction: b\nAction Input: {}", "one Action"),
        ('Thought: t\nAction Input: {"a": 1}', "without an Action"),
        ('Action Input: {"a": 1}\nAction: q', "after the Action"),
        ('Action: q\nAction Input: {}\nAction Input: {"a": 1}', "one Action Input"),
        ("Thought: t\nFinal Answer:   ", "Final Answer is empty"),
        ('{"thought": "t", "action": {"final_answer": " "}}', "no Action or Final Answer"),
    ],
)
def test_ambiguous_replies_say_why(text: str, error: str) -> None:
    proposal = parse_react(text)
    assert proposal["kind"] == "invalid" and error in proposal["error"]


def test_empty_json_final_answer_is_a_parse_failure() -> None:
    reply = '{"thought": "t", "action": {"final_answer": " "}}'
    assert "empty" in parse_json_action(reply)["error"]


def test_labels_count_only_at_the_start_of_a_line() -> None:
    proposal = parse_react('Thought: t\nAction: q\nAction Input: {"a": "x Observation: y"}')
    assert proposal["kind"] == "action" and proposal["arguments"] == {"a": "x Observation: y"}
    inline = parse_react('Action: q Action Input: {"a": 1}')
    assert inline["kind"] == "action" and inline["arguments"] == {"a": 1}


def test_wide_integers_in_arguments_are_made_checkpoint_safe() -> None:
    proposal = parse_react(f'Action: q\nAction Input: {{"n": {2**70}}}')
    assert proposal["kind"] == "action"
    assert proposal["arguments"] == {"n": "<int: 71 bits, wider than 64>"}
    call = AIMessage("", tool_calls=[{"name": "q", "args": {"n": 2**70}, "id": "1"}])
    assert parse_native(call)["arguments"] == {"n": "<int: 71 bits, wider than 64>"}


# LangChain's ReActSingleInputOutputParser test inputs. Agreement: the finish and the
# "Action: search Final Answer:" refusal. Disagreement: LangChain passes a free-text Action
# Input through; tether requires a JSON object and says so.
def test_langchain_react_single_input_cases() -> None:
    action = parse_react(
        "Thought: agent thought here\nAction: search\nAction Input: what is the temperature in SF?"
    )
    assert action["kind"] == "invalid" and "not a JSON object" in action["error"]
    finish = parse_react("Thought: agent thought here\nFinal Answer: The temperature is 100")
    assert finish["kind"] == "final" and finish["answer"] == "The temperature is 100"
    both = parse_react(
        "Thought: agent thought here\nAction: search Final Answer:\n"
        "Action Input: what is the temperature in SF?"
    )
    assert both["kind"] == "invalid"


# --- replies with one reading (the repair_output setting) -------------------------------------


@tool
def query_order(order_id: str, verbose: bool = False) -> str:
    """Looks an order up."""
    return f"order {order_id}"


@tool
def pay_order(order_id: str, amount: float) -> str:
    """Pays an order."""
    return "paid"


@tool
def list_orders() -> str:
    """Lists the orders."""
    return "ORD-1"


OFFERED = [query_order, pay_order, list_orders]


@pytest.mark.parametrize(
    ("text", "tool", "arguments", "repair"),
    [
        ('{"order_id": "ORD-1"}  (looking it up)', "query_order", {"order_id": "ORD-1"}, None),
        ('{"order_id": "ORD-1"}\nI will wait for it.', "query_order", {"order_id": "ORD-1"}, None),
        ('"ORD-1"', "query_order", {"order_id": "ORD-1"}, "bare_value"),
        ("ORD-1", "query_order", {"order_id": "ORD-1"}, "bare_value"),
        ("“ORD-1”", "query_order", {"order_id": "ORD-1"}, "bare_value"),
        ("`ORD-1`", "query_order", {"order_id": "ORD-1"}, "bare_value"),
        ("https://x.test/a?b=1", "query_order", {"order_id": "https://x.test/a?b=1"}, "bare_value"),
    ],
)
def test_action_inputs_with_one_reading_are_read(
    text: str, tool: str, arguments: dict[str, object], repair: str | None
) -> None:
    proposal = parse_react(f"Thought: t\nAction: {tool}\nAction Input: {text}", repair_for=OFFERED)
    assert proposal["kind"] == "action", proposal
    assert (proposal["tool"], proposal["arguments"]) == (tool, arguments)
    assert proposal["repairs"] == [repair or "json_then_prose"]


@pytest.mark.parametrize(
    ("action", "tool", "arguments"),
    [
        ('query_order(order_id="ORD-1")', "query_order", {"order_id": "ORD-1"}),
        ("query_order('ORD-1')", "query_order", {"order_id": "ORD-1"}),
        (
            'query_order("ORD-1", verbose=true)',
            "query_order",
            {"order_id": "ORD-1", "verbose": True},
        ),
        (
            'pay_order(order_id="ORD-1", amount=25.5)',
            "pay_order",
            {"order_id": "ORD-1", "amount": 25.5},
        ),
        ("`list_orders()`", "list_orders", {}),
    ],
)
def test_call_syntax_with_one_reading_is_read(
    action: str, tool: str, arguments: dict[str, object]
) -> None:
    proposal = parse_react(f"Thought: t\nAction: {action}", repair_for=OFFERED)
    assert proposal["kind"] == "action", proposal
    assert (proposal["tool"], proposal["arguments"]) == (tool, arguments)
    assert proposal["repairs"] == ["call_syntax"]


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        ('Action: query_order\nAction Input: {"order_id": "ORD-1"} {"order_id": "ORD-2"}', "after"),
        ('Action: query_order\nAction Input: {"order_id": "ORD-1"}, "verbose": true}', "after"),
        ('Action: query_order\nAction Input: {"order_id": "ORD-1"} and "verbose": true', "after"),
        ('Action: lookup\nAction Input: {"order_id": "ORD-1"} (looking it up)', "after"),
        ("Action: pay_order\nAction Input: ORD-1", "not a JSON object"),
        ("Action: list_orders\nAction Input: ORD-1", "not a JSON object"),
        ("Action: lookup\nAction Input: ORD-1", "not a JSON object"),
        ("Action: query_order\nAction Input: order_id=ORD-1", "not a JSON object"),
        ("Action: query_order\nAction Input: order_id: ORD-1", "not a JSON object"),
        ('Action: query_order\nAction Input: "ORD-1', "not a JSON object"),
        ('Action: query_order\nAction Input: "ORD-1" "ORD-2"', "not a JSON object"),
        ("Action: query_order\nAction Input: ORD-1\nthen ORD-2", "not a JSON object"),
        ('Action: query_order\nAction Input: ["ORD-1"]', "not a JSON object"),
        ('Action: pay_order("ORD-1", 25.5)', "Action Input, as a JSON object"),
        ('Action: query_order("ORD-1", order_id="ORD-2")', "name one tool"),
        ("Action: query_order(order_id=lookup())", "name one tool"),
        ("Action: query_order(**extra)", "name one tool"),
        ('Action: lookup(order_id="ORD-1")', "name one tool"),
        ('Action: query_order(order_id="A")\nAction Input: {"order_id": "B"}', "name one tool"),
    ],
)
def test_replies_with_more_than_one_reading_still_get_the_format_note(
    reply: str, error: str
) -> None:
    proposal = parse_react(reply, repair_for=OFFERED)
    assert proposal["kind"] == "invalid" and error in proposal["error"], proposal


@pytest.mark.parametrize(
    "reply",
    [
        'Action: query_order\nAction Input: {"order_id": "ORD-1"}  (looking it up)',
        'Action: query_order\nAction Input: "ORD-1"',
        "Action: query_order\nAction Input: ORD-1",
        'Action: query_order(order_id="ORD-1")',
    ],
)
def test_without_offered_tools_the_repairs_do_not_apply(reply: str) -> None:
    assert parse_react(reply, repair_for=OFFERED)["kind"] == "action"
    assert parse_react(reply)["kind"] == "invalid"


def test_repairs_json_read_already_did_are_named() -> None:
    proposal = parse_react("Action: q\nAction Input: {“a”： 1}")
    assert proposal.get("repairs") == ["punctuation"]
    proposal = parse_react("Action: q\nAction Input: {'a': 1,}")
    assert proposal.get("repairs") == ["json_repair"]
    assert "repairs" not in parse_react('Action: q\nAction Input: {"a": 1}')


def test_the_json_protocol_reads_prose_after_its_object_and_a_bare_value() -> None:
    reply = '{"thought": "t", "action": {"tool": "query_order", "arguments": "ORD-1"}} (done)'
    proposal = parse_json_action(reply, repair_for=OFFERED)
    assert proposal["kind"] == "action" and proposal["arguments"] == {"order_id": "ORD-1"}
    assert proposal["repairs"] == ["json_then_prose", "bare_value"]
    assert parse_json_action(reply)["kind"] == "invalid"
    final = parse_json_action(
        '{"thought": "t", "action": {"final_answer": "4"}} ok', repair_for=OFFERED
    )
    assert final["kind"] == "final" and final["repairs"] == ["json_then_prose"]
    unknown = '{"thought": "t", "action": {"tool": "lookup", "arguments": {}}} (done)'
    assert "text after" in parse_json_action(unknown, repair_for=OFFERED)["error"]
    several = '{"thought": "t", "action": {"tool": "pay_order", "arguments": "ORD-1"}}'
    assert "must be a JSON object" in parse_json_action(several, repair_for=OFFERED)["error"]


def _invalid_call(name: str, args: str) -> AIMessage:
    call = {"name": name, "args": args, "id": "1", "error": "bad", "type": "invalid_tool_call"}
    return AIMessage("", invalid_tool_calls=[call])  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("name", "args", "repair"),
    [
        ("query_order", '{"order_id": "ORD-1"} (looking it up)', "json_then_prose"),
        ("query_order", "ORD-1", "bare_value"),
    ],
)
def test_native_call_arguments_with_one_reading_are_read(name: str, args: str, repair: str) -> None:
    proposal = parse_native(_invalid_call(name, args), repair_for=OFFERED)
    assert proposal["kind"] == "action" and proposal["arguments"] == {"order_id": "ORD-1"}
    assert proposal["repairs"] == [repair]
    assert parse_native(_invalid_call(name, args))["kind"] == "invalid"


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("query_order", '{"order_id": "ORD-1"'),
        ("query_order", '{"order_id": "ORD-1"}\n{"order_id": "ORD-2"}'),
        ("pay_order", "ORD-1"),
        ("lookup", "ORD-1"),
    ],
)
def test_native_call_arguments_without_one_reading_are_refused(name: str, args: str) -> None:
    proposal = parse_native(_invalid_call(name, args), repair_for=OFFERED)
    assert proposal["kind"] == "invalid" and "bad" in proposal["error"]


def _order_graph(**overrides: object) -> tuple[dict[str, Any], list[Any]]:
    replies = ["Thought: look\nAction: query_order\nAction Input: ORD-1", "Final Answer: found"]
    graph = build_graph(
        AgentSettings(check_final=False, **overrides),  # type: ignore[arg-type]
        model=ScriptedChatModel(responses=replies),
        registry=ToolRegistry([query_order]),
    )
    return run_traced(graph, {"task": "look ORD-1 up"})


def test_a_repair_is_in_the_trace_and_the_setting_turns_repairs_off() -> None:
    state, trace = _order_graph()
    first = next(e["detail"] for e in trace if e["event"] == "model_call")
    assert first["repairs"] == ["bare_value"] and first["arguments"] == {"order_id": "ORD-1"}
    assert state["status"] == "completed" and state["tool_buffer"]
    state, trace = _order_graph(repair_output=False)
    first = next(e["detail"] for e in trace if e["event"] == "model_call")
    assert first["kind"] == "invalid" and "repairs" not in first
    assert state["tool_buffer"] == []


# --- any string: a proposal, never an exception, in linear time ------------------------------

_LABELS = st.sampled_from(
    [
        "Thought: ",
        "Action: ",
        "Action Input: ",
        "Final Answer: ",
        "Observation: ",
        "\n",
        "：",
        "{",
        "}",
        "[",
        '"',
        "“",
        "”",
        "'",
        "```",
        "\\",
        ",",
        "\r",
        " ",
        "\u3000",
        "q",
        "1",
    ]
)
_REPLIES = st.text() | st.lists(_LABELS | st.text(max_size=5), max_size=40).map("".join)


_NAMES = st.sampled_from(["query_order", "pay_order", "list_orders", "lookup", "Query_Order", ""])
_PIECES = st.sampled_from(
    [
        '{"order_id": "ORD-1"}',
        '"order_id"',
        "ORD-1",
        '"ORD-1"',
        "(",
        ")",
        "()",
        '(order_id="ORD-1")',
        "('ORD-1')",
        "order_id=",
        "amount=2",
        "**kw",
        " (looking it up)",
        ", ",
        ": ",
        "{",
        "}",
        "[",
        "]",
        '"',
        "'",
        "“",
        "`",
        "true",
        "\n",
        " ",
        "-" * 3,
        "Action Input: ",
        "Observation: ",
    ]
)
_BITS = st.lists(_PIECES | st.text(max_size=4), max_size=10).map("".join)
_NEAR_MISSES = st.builds(
    "Thought: t\nAction: {}{}{}{}".format,
    _NAMES,
    _BITS,
    st.sampled_from(["", "\nAction Input: ", " Action Input: "]),
    _BITS,
)
_CALLS = st.builds(
    "Thought: t\nAction: {}({})".format,
    _NAMES,
    st.sampled_from(['order_id="ORD-1"', "'ORD-1'", "", '"ORD-1", amount=2', "x=[1, {}]"]) | _BITS,
)
_JSON_NEAR_MISSES = st.builds(
    '{{"thought": "t", "action": {{"tool": "{}", "arguments": {}}}}}{}'.format,
    _NAMES,
    _BITS,
    _BITS,
)
_REPAIRS_WITH_ONE_READING = {"json_then_prose", "bare_value", "call_syntax"}


def _proposals(text: str, truncated: bool, name: str) -> list[Proposal]:
    """``text`` read by every protocol, with and without the offered tools' repairs."""
    return [
        parse(text, truncated=truncated, repair_for=tools)
        for parse in (parse_react, parse_json_action)
        for tools in ((), OFFERED)
    ] + [
        parse_native(_invalid_call(name, text), truncated=truncated, repair_for=OFFERED),
        parse_native(AIMessage(text), truncated=truncated, repair_for=OFFERED),
    ]


@settings(max_examples=300, deadline=None)
@given(_REPLIES | _NEAR_MISSES | _CALLS | _JSON_NEAR_MISSES, st.booleans(), _NAMES)
def test_any_reply_gives_a_proposal(text: str, truncated: bool, name: str) -> None:
    """Any text is a proposal, never an exception; a reply read by a repair that needs one
    reading calls an offered tool."""
    offered = {tool.name for tool in OFFERED}
    for proposal in _proposals(text, truncated, name):
        assert proposal["kind"] in ("action", "final", "invalid")
        if proposal["kind"] == "final":
            assert proposal["answer"].strip()
        if proposal["kind"] == "action":
            json.dumps(proposal["arguments"], allow_nan=False)
            if _REPAIRS_WITH_ONE_READING & set(proposal.get("repairs", [])):
                assert proposal["tool"] in offered, proposal


_N = 200_000
"""Big enough that a quadratic pass would take minutes; pytest-timeout fails the test then."""


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    "text",
    [
        "Thought:" + "\n" * _N,
        "Thought: x" + "\n \n" * _N + "Action",
        'Thought: t\nAction: q\nAction Input: ```{"a": 1}' + " " * _N + "x",
        "Action Input: ```" + " " * _N + "```x",
        " " * _N + "Actio",
        "Action" + " " * _N + "Inpu",
        "Action:" + " \t" * _N + "q",
        "Action: q " + "Action " * _N,
        'Thought: "' + '\n"' * _N,
        "Action: q\nAction Input: {" + '"a":1,' * _N,
        "{" + " " * _N,
        '{"a": "' + "\\" * _N,
    ],
)
def test_pathological_replies_are_read_in_linear_time(text: str) -> None:
    assert parse_react(text)["kind"] == "invalid"
    assert parse_json_action(text)["kind"] == "invalid"


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    "text",
    [
        "Action: query_order(" + "x=1, " * _N + ")",
        "Action: query_order(" + "-" * _N + "1)",
        "Action: query_order(" + "(" * _N + ")",
        "Action: query_order" + " " * _N + "(x",
        "Action: query_order\nAction Input: ORD" + "-" * _N,
        "Action: query_order\nAction Input: order_id" + "." * _N,
        "Action: query_order\nAction Input: a" + " " * _N + "b",
        'Action: query_order\nAction Input: {"a": 1}' + ' "' * _N,
        'Action: query_order\nAction Input: {"a": 1} x' + '" \t' * _N + ":",
    ],
)
def test_replies_read_by_the_repairs_are_read_in_linear_time(text: str) -> None:
    assert parse_react(text, repair_for=OFFERED)["kind"] in ("action", "invalid")
    assert parse_json_action(text, repair_for=OFFERED)["kind"] == "invalid"
