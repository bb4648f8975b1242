"""Recorded conversations read into turns, calls, results and usage, whatever wrote them;
bad input named with its file and line, never a traceback from deep inside."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    messages_to_dict,
)
from tether_replay.records import Call, Conversation, RecordError, read_conversations
from tether_replay.tools import ToolFile, infer_specs, is_write_name

EXAMPLES = Path(__file__).parents[2] / "docs" / "examples" / "replay"

OPENAI: dict[str, Any] = {
    "uid": "run-1",
    "reward": 1.0,
    "cohort": "my-agent",
    "toolset": "shop",
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "assistant", "content": "Hello! How can I help?"},  # a greeting: left out
        {"role": "user", "content": "Status of A-1?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_order", "arguments": '{"order_id": "A-1"}'},
                }
            ],
            "usage": {"prompt_tokens": 100, "completion_tokens": 7},
        },
        {"role": "tool", "tool_call_id": "c1", "name": "get_order", "content": "shipped"},
        {"role": "assistant", "content": "It shipped."},
        {"role": "user", "content": [{"type": "text", "text": "Thanks"}]},
        {"role": "assistant", "content": "Bye."},
    ],
}


def write(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def only(path: Path) -> Conversation:
    conversations = list(read_conversations(path))
    assert len(conversations) == 1
    return conversations[0]


def test_openai_messages_become_turns(tmp_path: Path) -> None:
    run = only(write(tmp_path / "run.json", OPENAI))
    assert (run.uid, run.reward, run.cohort, run.toolset) == ("run-1", 1.0, "my-agent", "shop")
    assert run.system == "Be brief."
    assert [turn.user for turn in run.turns] == ["Status of A-1?", "Thanks"]
    first, second = run.turns
    assert [reply.text for reply in first.replies] == ["", "It shipped."]
    assert first.replies[0].calls == (Call("get_order", {"order_id": "A-1"}, "c1"),)
    assert first.replies[0].usage == (100, 7)
    assert first.replies[1].usage is None
    assert first.results["c1"].text == "shipped" and not first.results["c1"].error
    assert [reply.text for reply in second.replies] == ["Bye."] and second.results == {}
    assert run.calls == 3


def test_a_bare_openai_list_and_a_batch(tmp_path: Path) -> None:
    bare = only(write(tmp_path / "bare.json", OPENAI["messages"]))
    assert bare.uid == "bare.json" and bare.reward is None and len(bare.turns) == 2
    batch = list(read_conversations(write(tmp_path / "batch.json", [OPENAI, OPENAI])))
    assert [c.uid for c in batch] == ["run-1", "run-1"]


def test_langchain_messages_become_turns(tmp_path: Path) -> None:
    messages = [
        SystemMessage("Be brief."),
        HumanMessage("Cancel A-2"),
        AIMessage(
            "",
            tool_calls=[{"name": "cancel_order", "args": {"order_id": "A-2"}, "id": "t1"}],
            usage_metadata={"input_tokens": 50, "output_tokens": 5, "total_tokens": 55},
        ),
        ToolMessage("no such order", tool_call_id="t1", name="cancel_order", status="error"),
        AIMessage("I could not find A-2."),
    ]
    run = only(write(tmp_path / "lc.json", messages_to_dict(messages)))
    assert run.uid == "lc.json" and run.system == "Be brief."
    (turn,) = run.turns
    assert turn.user == "Cancel A-2"
    assert turn.replies[0].calls == (Call("cancel_order", {"order_id": "A-2"}, "t1"),)
    assert turn.replies[0].usage == (50, 5)
    assert turn.results["t1"].error and turn.results["t1"].name == "cancel_order"
    assert turn.replies[1].text == "I could not find A-2."


def test_the_real_runs_format(tmp_path: Path) -> None:
    record = {
        "uid": "r1",
        "model": "m",
        "impl": "h",
        "toolset": "shop",
        "reward": 0.0,
        "system": "policy",
        "ev": [
            {"r": "u", "x": "Pay A-3"},
            {"r": "a", "x": "", "c": [{"n": "pay_order", "a": {"order_id": "A-3"}, "id": "p"}]},
            {"r": "t", "id": "p", "n": "pay_order", "e": 1, "x": "declined"},
            {"r": "a", "x": "The payment was declined.", "c": []},
        ],
        "usage": [[10, 2], None],
    }
    path = tmp_path / "runs.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\n\n" + json.dumps(record | {"uid": "r2"}) + "\n")
    first, second = read_conversations(path)
    assert (first.uid, second.uid) == ("r1", "r2")
    assert (first.cohort, first.reward, first.system, first.toolset) == (
        "m / h",
        0.0,
        "policy",
        "shop",
    )
    (turn,) = first.turns
    assert turn.replies[0].calls == (Call("pay_order", {"order_id": "A-3"}, "p"),)
    assert [reply.usage for reply in turn.replies] == [(10, 2), None]
    assert turn.results["p"].error and turn.results["p"].text == "declined"


def test_the_shipped_examples_read() -> None:
    assert [len(c.turns) for c in read_conversations(EXAMPLES / "openai.json")] == [2]
    assert [c.calls for c in read_conversations(EXAMPLES / "langchain.json")] == [2]
    assert [c.uid for c in read_conversations(EXAMPLES / "runs.jsonl")] == ["shop-17", "shop-18"]


# --- bad input --------------------------------------------------------------------------------


def test_not_json_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(OPENAI) + "\n{oops\n", encoding="utf-8")
    with pytest.raises(RecordError, match=r"runs\.jsonl:2: not JSON"):
        list(read_conversations(path))
    single = tmp_path / "one.json"
    single.write_text('{"messages": [\n  {"role": "user",,}\n]}', encoding="utf-8")
    with pytest.raises(RecordError, match=r"one\.json: not JSON .* at line 2"):
        list(read_conversations(single))


def test_an_unknown_role_names_the_file_line_and_message(tmp_path: Path) -> None:
    bad = {"messages": [{"role": "user", "content": "hi"}, {"role": "robot", "content": "x"}]}
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(OPENAI) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(RecordError, match=r"runs\.jsonl:2: message 1 has an unknown role 'robot'"):
        list(read_conversations(path))


@pytest.mark.parametrize("value", [{"messages": []}, {"nothing": 1}, 42, "text"])
def test_a_value_that_is_no_conversation(tmp_path: Path, value: Any) -> None:
    with pytest.raises(RecordError, match=r"^x\.json: expected an object"):
        list(read_conversations(write(tmp_path / "x.json", value)))


def test_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="no such file"):
        list(read_conversations(tmp_path / "nope.jsonl"))


@pytest.mark.parametrize("value", ["just text", 42, None])
def test_a_tools_file_that_is_not_a_list_or_an_object(tmp_path: Path, value: Any) -> None:
    path = write(tmp_path / "tools.json", value)
    with pytest.raises(RecordError, match=r"tools\.json: a tools file holds a list"):
        ToolFile.read(path)


def test_a_tools_file_that_is_not_json_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text('[\n  {"name": "a"},\n  oops\n]', encoding="utf-8")
    with pytest.raises(RecordError, match=r"tools\.json: cannot read the tools file .*line 3"):
        ToolFile.read(path)


def test_a_tool_without_a_name(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match=r"tools\.json: each tool needs a name"):
        ToolFile.read(write(tmp_path / "tools.json", [{"description": "x"}]))


# --- tools ------------------------------------------------------------------------------------


def test_tools_from_a_file_by_toolset_plus_inferred_ones(tmp_path: Path) -> None:
    tools = ToolFile.read(EXAMPLES / "tools.json")
    run = only(write(tmp_path / "run.json", OPENAI | {"toolset": "shop"}))
    specs = {spec.name: spec for spec in tools.specs_for(run)}
    assert set(specs) == {"get_order", "cancel_order"}
    assert specs["cancel_order"].side_effects and not specs["get_order"].side_effects


def test_inferred_tools_and_write_verbs(tmp_path: Path) -> None:
    run = only(write(tmp_path / "run.json", OPENAI))
    (spec,) = infer_specs([run])
    assert spec.name == "get_order" and not spec.side_effects
    assert spec.parameters["required"] == ["order_id"]
    assert all(is_write_name(n) for n in ("cancel_order", "CancelOrder", "cancel-order"))
    assert not any(is_write_name(n) for n in ("get_order", "process_payment", ""))


def test_a_hostile_log_nested_deep_is_a_clear_error_not_a_crash(tmp_path: Path) -> None:
    """A log is untrusted: JSON or a calls repr nested 100,000 deep gets a RecordError."""
    deep = "[" * 100_000 + "]" * 100_000
    (tmp_path / "deep.jsonl").write_text(deep + "\n", encoding="utf-8")
    with pytest.raises(RecordError, match=r"deep\.jsonl:1: JSON nested too deep"):
        list(read_conversations(tmp_path / "deep.jsonl"))
    run = {"uid": "r", "ev": [{"r": "u", "x": "hi"}, {"r": "a", "x": "", "c": deep}]}
    (tmp_path / "calls.jsonl").write_text(json.dumps(run) + "\n", encoding="utf-8")
    with pytest.raises(RecordError, match=r"calls\.jsonl:1: unreadable tool calls"):
        list(read_conversations(tmp_path / "calls.jsonl"))
