"""A thread is a conversation: each user message is a run of its own (counters, step cap and
token budget start afresh), and what the calls established stays (the call memory, the
grounds). A record a write or a new user message may have made stale is not recalled."""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel
from tether import AgentSettings, ToolRegistry, build_graph, tool
from tether.testing import ScriptedChatModel, run_traced

from tests.scripts import act, final


class _Key(BaseModel):
    key: str


def _world() -> tuple[list[Any], dict[str, Any]]:
    """A read, a write that changes what the read returns, and a write that always fails."""
    store = {"a": "old", "runs": []}

    @tool(args_schema=_Key)
    def read(key: str) -> str:
        """Read a record."""
        store["runs"].append(("read", key))
        return f"{key} is {store[key]}"

    @tool(args_schema=_Key, side_effects=True)
    def change(key: str) -> str:
        """Change a record."""
        store["runs"].append(("change", key))
        store[key] = "new"
        return "changed"

    @tool(args_schema=_Key, side_effects=True)
    def refund(key: str) -> str:
        """Refund an order; it always fails here."""
        store["runs"].append(("refund", key))
        raise ValueError("refund service says no")

    return [read, change, refund], store


def _thread(replies: list[str], **settings: Any) -> tuple[Any, ScriptedChatModel, dict[str, Any]]:
    tools, store = _world()
    model = ScriptedChatModel(responses=replies)
    options = {"approval_tools": [], "check_final": False} | settings
    graph = build_graph(
        AgentSettings(**options),
        model=model,
        registry=ToolRegistry(tools),
        checkpointer=InMemorySaver(),
    )
    return graph, model, store


def _turn(graph: Any, task: str) -> tuple[dict[str, Any], list[Any]]:
    return run_traced(graph, {"task": task}, config={"configurable": {"thread_id": "t"}})


def _gates(trace: list[Any]) -> list[str]:
    return [e["detail"].get("gate") for e in trace if e["event"] == "model_call"]


def test_a_read_after_a_successful_write_runs_again() -> None:
    replies = [
        act("read", '{"key": "a"}'),
        act("change", '{"key": "a"}'),
        act("read", '{"key": "a"}'),  # the record says "old": stale since the change
        act("change", '{"key": "a"}'),  # the write itself is still not made twice
        final("a is new"),
    ]
    graph, _, store = _thread(replies)
    state, trace = _turn(graph, "change a and tell me what it is")
    assert store["runs"] == [("read", "a"), ("change", "a"), ("read", "a")]
    assert _gates(trace) == ["run", "run", "run", "recall", None]
    assert state["status"] == "completed"


def test_a_repeated_read_within_a_run_is_still_answered_from_its_record() -> None:
    replies = [act("read", '{"key": "a"}'), act("read", '{"key": "a"}'), final("a is old")]
    graph, _, store = _thread(replies)
    _, trace = _turn(graph, "what is a")
    assert store["runs"] == [("read", "a")] and _gates(trace)[:2] == ["run", "recall"]


def test_each_user_message_is_a_run_with_its_own_budget_and_counters() -> None:
    replies = [act("read", '{"key": "a"}'), final("a is old")] * 2
    graph, _, store = _thread(replies)
    first, _ = _turn(graph, "what is a")
    second, trace = _turn(graph, "and now?")
    assert first["status"] == second["status"] == "completed"
    assert second["steps"] == 2  # counted from the new message, not over the thread
    assert second["usage"]["total_tokens"] < 1.5 * first["usage"]["total_tokens"]
    assert store["runs"] == [("read", "a"), ("read", "a")]  # the user may have changed a since
    assert _gates(trace)[0] == "run"


def test_a_write_that_failed_twice_is_refused_in_a_later_message_of_the_thread() -> None:
    replies = [
        act("refund", '{"key": "o1"}'),
        act("refund", '{"key": "o1"}'),
        final("The refund failed."),
        act("refund", '{"key": "o1"}'),  # the next message asks again: refused, not run
        final("The refund cannot be made."),
    ]
    graph, _, store = _thread(replies)
    _turn(graph, "refund o1")
    _, trace = _turn(graph, "please try the refund again")
    assert store["runs"] == [("refund", "o1"), ("refund", "o1")]
    assert _gates(trace)[0] == "refuse"


def test_a_value_the_user_gave_in_an_earlier_message_backs_a_later_answer() -> None:
    replies = [final("Which order?"), final("Order ORD-2024-777 will be handled.")]
    graph, _, _ = _thread(replies, check_final=True)
    _turn(graph, "I am customer CUST-9 with order ORD-2024-777")
    state, trace = _turn(graph, "please go ahead")
    kinds = [e["detail"].get("step_kind") for e in trace if e["event"] == "decision"]
    assert kinds == ["final"] and state["answer"] == "Order ORD-2024-777 will be handled."


def test_the_agents_instructions_reach_the_system_prompt() -> None:
    graph, model, _ = _thread([final("done")], instructions="Refunds take 24 hours.")
    _turn(graph, "hello")
    assert "Refunds take 24 hours." in model.calls[0].messages[0].text


def test_a_value_worked_out_from_the_task_alone_is_still_sent_back() -> None:
    """What the user said backs an answer, but arithmetic on the task's own numbers is the
    tools' work: 1234.50 * 1.88 stated without a call goes back once."""
    graph, _, _ = _thread([final("It is 2320.86."), final("It is 2320.86.")], check_final=True)
    _, trace = _turn(graph, "Calculate 1234.50 * 1.88 for key a.")
    kinds = [e["detail"].get("step_kind") for e in trace if e["event"] == "decision"]
    assert kinds == ["sent_back", "final"]
