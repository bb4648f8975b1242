"""Approval requests and answers use LangChain v1's human-in-the-loop shape; answers are
untrusted and cannot slip past the gate."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from tether import AgentSettings, ToolRegistry, build_graph, tool
from tether.control.approval import ApprovalError, parse_decision
from tether.errors import SettingsError
from tether.testing import ScriptedChatModel

from tests.scripts import act, final

calls: list[dict[str, Any]] = []
WIDE = {"amount": 123456789012345678901234567890}


@tool(side_effects=True)
def transfer(amount: Decimal, note: str = "none") -> str:
    """Move money (changes the world)."""
    calls.append({"amount": amount, "note": note})
    return "moved"


@pytest.fixture(autouse=True)
def _no_calls() -> None:
    calls.clear()


def paused_graph(settings: AgentSettings, replies: list[str] | None = None) -> Any:
    model = ScriptedChatModel(
        responses=replies or [act("transfer", '{"amount": 10.5}'), final("moved it")]
    )
    graph = build_graph(
        settings, model=model, registry=ToolRegistry([transfer]), checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"task": "move 10.50"}, config)
    return graph, config


def request_of(graph: Any, config: Any) -> dict[str, Any]:
    (task,) = [t for t in graph.get_state(config).tasks if t.interrupts]
    value: dict[str, Any] = task.interrupts[0].value
    return value


def test_request_has_langchains_shape() -> None:
    hitl = pytest.importorskip("langchain.agents.middleware.human_in_the_loop")
    from pydantic import TypeAdapter

    graph, config = paused_graph(AgentSettings())
    request = request_of(graph, config)
    TypeAdapter(hitl.HITLRequest).validate_python(request)  # raises if the shape is off
    assert request["action_requests"][0]["name"] == "transfer"
    assert request["action_requests"][0]["args"] == {"amount": 10.5}
    assert request["review_configs"] == [
        {"action_name": "transfer", "allowed_decisions": ["approve", "edit", "reject"]}
    ]
    answer = {"decisions": [{"type": "approve"}]}
    TypeAdapter(hitl.HITLResponse).validate_python(answer)
    assert graph.invoke(Command(resume=answer), config)["status"] == "completed"
    assert calls == [{"amount": Decimal("10.5"), "note": "none"}]


def test_description_names_the_side_effects_mark_and_the_normalised_arguments() -> None:
    graph, config = paused_graph(AgentSettings())
    description = request_of(graph, config)["action_requests"][0]["description"]
    assert "transfer is marked side_effects" in description
    assert '{"amount": "10.5", "note": "none"}' in description  # validated, default filled in


def test_description_names_the_approval_tools_setting() -> None:
    graph, config = paused_graph(AgentSettings(approval_tools=["transfer"]))
    description = request_of(graph, config)["action_requests"][0]["description"]
    assert "listed in the approval_tools setting" in description


def test_a_call_that_does_not_validate_goes_back_to_the_model_without_asking() -> None:
    model = ScriptedChatModel(
        responses=[act("transfer", '{"note": "x"}'), act("transfer", '{"amount": 3}'), final("ok")]
    )
    graph = build_graph(model=model, registry=[transfer], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"task": "move 3"}, config)
    # the first call was never put to the operator: the model saw its error and tried again
    assert "missing required field 'amount'" in "\n".join(m.text for m in model.calls[1].messages)
    assert request_of(graph, config)["action_requests"][0]["args"] == {"amount": 3}
    assert calls == []


@pytest.mark.parametrize(
    "answer",
    [
        "approve",
        {"type": "approve", "extra": 1, "decisions": "x"},
        {"decisions": [{"type": "edit", "edited_action": {"name": "transfer", "args": []}}]},
        {"decisions": [{"type": "edit", "edited_action": {"name": "other", "args": {}}}]},
        {"decisions": [{"type": "edit", "edited_action": {"name": "transfer", "args": {}}}]},
        [{"type": "approve"}],
        12,
        # legal JSON, but no checkpoint can hold an integer over 64 bits
        {"decisions": [{"type": "edit", "edited_action": {"name": "transfer", "args": WIDE}}]},
    ],
)
def test_an_unusable_resume_asks_again_and_runs_nothing(answer: Any) -> None:
    graph, config = paused_graph(AgentSettings())
    state = graph.invoke(Command(resume=answer), config)
    assert state.get("status", "running") == "running"
    assert calls == []
    description = request_of(graph, config)["action_requests"][0]["description"]
    assert "previous answer could not be used" in description
    # the run is still answerable
    state = graph.invoke(Command(resume={"decisions": [{"type": "reject"}]}), config)
    assert state["status"] == "completed" and calls == []


def test_a_single_decision_without_the_wrapper_is_read() -> None:
    assert parse_decision({"type": "approve"}, "transfer") == {"type": "approve"}
    edited = {"type": "edit", "edited_action": {"name": "transfer", "args": {"amount": "1"}}}
    assert parse_decision({"decisions": [edited]}, "transfer") == edited


def test_an_edit_runs_the_edited_arguments() -> None:
    graph, config = paused_graph(AgentSettings())
    edited = {"name": "transfer", "args": {"amount": "3.25", "note": "fixed"}}
    state = graph.invoke(
        Command(resume={"decisions": [{"type": "edit", "edited_action": edited}]}), config
    )
    assert state["status"] == "completed"
    assert calls == [{"amount": Decimal("3.25"), "note": "fixed"}]


def test_parse_errors_are_one_clear_line() -> None:
    with pytest.raises(ApprovalError) as caught:
        parse_decision({"decisions": [{"type": "maybe"}]}, "transfer")
    text = str(caught.value)
    assert "\n" not in text and '{"decisions": [{"type": "approve"}]}' in text


def test_paused_run_survives_a_store_round_trip(tmp_path: Path) -> None:
    """The request is plain JSON: it is saved and read back from SQLite unchanged."""
    from tether.agent import Agent
    from tether.control.store import open_run_store

    model = ScriptedChatModel(responses=[act("transfer", '{"amount": 2}'), final("ok")])
    with open_run_store(tmp_path / "runs.sqlite") as store:
        agent = Agent(AgentSettings(), store=store, registry=ToolRegistry([transfer]), model=model)
        paused = agent.run("move 2", thread_id="r")
        assert agent.show("r")["pending_approval"] == paused.pending
        done = agent.resume("r", {"decisions": [{"type": "approve"}]})
    assert done.status == "completed" and len(calls) == 1


def deep(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels):
        value = {"x": value}
    return value


@pytest.mark.parametrize(
    "answer",
    [
        {"decisions": [{"type": "approve", "note": 2**100}]},
        {"type": "approve", "note": -(2**64)},
        {"type": "approve", "context": deep(200)},
        {"decisions": [{"type": "approve"}], "extra": [2**70]},
    ],
)
def test_unknown_extra_fields_are_dropped_as_langchain_does(answer: Any) -> None:
    assert parse_decision(answer, "transfer") == {"type": "approve"}
    graph, config = paused_graph(AgentSettings())
    assert graph.invoke(Command(resume=answer), config)["status"] == "completed"
    assert calls == [{"amount": Decimal("10.5"), "note": "none"}]


def test_a_decision_a_run_cannot_keep_is_refused_with_the_reason() -> None:
    edit = {"type": "edit", "edited_action": {"name": "transfer", "args": {"note": deep(40)}}}
    with pytest.raises(ApprovalError, match="nesting deeper than 32"):
        parse_decision(edit, "transfer")


class Recording:
    """A serializer that records the bytes it writes, to show nothing passes it by."""

    def __init__(self) -> None:
        from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

        self.inner, self.written = JsonPlusSerializer(), []  # type: ignore[var-annotated]

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        typed = self.inner.dumps_typed(obj)
        self.written.append(typed[1])
        return typed

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        return self.inner.loads_typed(data)


class Rot13Cipher:
    """A toy cipher for LangGraph's EncryptedSerializer (the AES one needs pycryptodome)."""

    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        return "rot", bytes((b + 13) % 256 for b in plaintext)

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        return bytes((b - 13) % 256 for b in ciphertext)


def test_the_callers_checkpointer_is_left_alone_and_a_wide_answer_is_kept_as_read() -> None:
    from langgraph.checkpoint.serde.encrypted import EncryptedSerializer

    recording = Recording()
    encrypted = EncryptedSerializer(Rot13Cipher(), recording)  # type: ignore[arg-type]
    saver = InMemorySaver(serde=encrypted)
    model = ScriptedChatModel(responses=[act("transfer", '{"amount": 10.5}'), final("ok")])
    graph = build_graph(AgentSettings(), model=model, registry=[transfer], checkpointer=saver)
    assert saver.serde is encrypted  # not swapped for a wrapper
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"task": "move 10.50"}, config)
    wide = {"decisions": [{"type": "approve", "note": 7 * 10**40}]}
    assert graph.invoke(Command(resume=wide), config)["status"] == "completed"
    assert calls == [{"amount": Decimal("10.5"), "note": "none"}]
    stored = [typed for writes in saver.writes.values() for _, _, typed, _ in writes.values()]
    stored += [typed for typed in saver.blobs.values() if typed[0] != "empty"]
    assert stored and all(typed[0].endswith("+rot") for typed in stored)  # all went through it
    # a checkpoint cannot hold the wide field: the run keeps the decision read, without it
    assert not any(b"0" * 40 in plain for plain in recording.written)


def test_settings_as_a_dict_and_tools_as_a_list_are_accepted() -> None:
    model = ScriptedChatModel(responses=[act("transfer", '{"amount": 1}'), final("ok")])
    graph = build_graph({"approval_tools": []}, model=model, registry=[transfer])
    assert graph.invoke({"task": "move 1"})["status"] == "completed"
    assert calls == [{"amount": Decimal("1"), "note": "none"}]
    with pytest.raises(TypeError, match="a ToolRegistry or a list of tools, not dict"):
        build_graph(registry={"transfer": transfer})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("names", "said"),
    [
        (["pay"], "'pay' (did you mean pay_order?); tools: pay_order, transfer"),
        (["PayOrder"], "'PayOrder' (did you mean pay_order?)"),
        (["transfer", "tranfser"], "'tranfser' (did you mean transfer?)"),
    ],
)
def test_an_approval_tools_name_no_tool_has_fails_at_build(names: list[str], said: str) -> None:
    @tool(side_effects=True)
    def pay_order(order_id: str) -> str:
        """Pay an order."""
        return "paid"

    with pytest.raises(SettingsError, match="approval_tools names an unknown tool") as e:
        build_graph(AgentSettings(approval_tools=names), registry=[transfer, pay_order])
    assert said in str(e.value)


def test_approval_tools_are_checked_against_the_tools_at_each_step(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TETHER_APPROVAL_TOOLS", '["Transfer_"]')  # read at the first run
    model = ScriptedChatModel(responses=[act("transfer", '{"amount": 1}'), final("ok")])
    registry = ToolRegistry()
    graph = build_graph(model=model, registry=registry, checkpointer=InMemorySaver())
    registry.register(transfer)  # tools may change between steps
    config = {"configurable": {"thread_id": "t"}}
    with pytest.raises(SettingsError) as caught:
        graph.invoke({"task": "move 1"}, config)
    assert "'Transfer_' (did you mean transfer?)" in str(caught.value)
    assert "\n" not in str(caught.value) and model.calls == [] and calls == []
    with pytest.raises(SettingsError):  # a run's own context is checked too
        graph.invoke({"task": "move 1"}, config, context={"approval_tools": ["tranfer"]})
