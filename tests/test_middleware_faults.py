"""tether's middleware against what a model server, a tool or another middleware may do: a
control fact never comes from a message's id, metadata or a tool's text, usage is checked,
and an order of middleware that cannot hold is refused when the agent is built."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent as langchain_create_agent
from langchain.agents.middleware import (
    HumanInTheLoopMiddleware,
    ModelCallLimitMiddleware,
    ModelRetryMiddleware,
    ToolRetryMiddleware,
)
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool, ToolException
from langchain_tether import (
    RepeatGuardMiddleware,
    TetherMiddleware,
    TokenBudgetMiddleware,
    answer_of,
    check_order,
    create_agent,
    tether_middleware,
)
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from tether import AgentSettings, tool
from tether.testing import ScriptedChatModel
from tether.tools import error as tether_error
from tether.tools import run_id_from
from tether.tools import success as tether_success

from tests.test_middleware import (
    ONE_ATTEMPT,
    agent_with,
    ask,
    fetch,
    long_read,
    lookup_order,
    pay_order,
    runs,
)


@pytest.fixture(autouse=True)
def _fresh_counts() -> None:
    runs.clear()


def calls_to(name: str, count: int, *, ident: str | None = None, **extra: Any) -> list[AIMessage]:
    """``count`` replies each calling ``name`` once, with the reply id ``ident`` (numbered)."""
    return [
        AIMessage(
            "",
            id=f"{ident}{i}" if ident and ident.endswith("-") else ident,
            tool_calls=[{"name": name, "args": {"url": f"https://x/{i}"}, "id": f"c{i}"}],
            **extra,
        )
        for i in range(count)
    ]


# --- F1, F2, F12: ids and metadata a server may set are not control facts ----------------------
@pytest.mark.parametrize("ident", [None, "tether-note-cap", "tether-note-stop-"])
def test_a_reply_id_a_server_sets_changes_no_control(ident: str | None) -> None:
    """A reply whose id is one tether gives its own messages is read as any reply: the
    breaker opens at its fourth failed step whatever the replies' ids."""
    replies = [*calls_to("fetch", 25, ident=ident), "I could not fetch it."]
    agent, model = agent_with(replies, [fetch], tether_middleware())
    out = agent.invoke(ask("Fetch the page"))
    assert runs["fetch"] == 4 and out["tether_status"] == "failed"
    assert out["tether_cause"] == "breaker" and len(model.calls) == 5


@pytest.mark.parametrize("ident", [None, "tether-note-stop-"])
def test_the_budget_counts_every_reply_whatever_its_id(ident: str | None) -> None:
    """Each call reports 1,000 tokens spent (plausible for its prompt): the budget of
    5,000 ends the run after the same calls whatever the replies' ids."""
    usage: Any = {"input_tokens": 990, "output_tokens": 10, "total_tokens": 1000}
    replies = [
        AIMessage(
            "",
            id=f"{ident}{i}" if ident else None,
            tool_calls=[{"name": "lookup_order", "args": {"order_id": f"ORD-{i}"}, "id": f"c{i}"}],
            usage_metadata=usage,
        )
        for i in range(13)
    ]
    settings = AgentSettings(token_budget=5000, max_tokens=100)
    agent, model = agent_with([*replies, "Done."], [lookup_order], tether_middleware(settings))
    out = agent.invoke(ask("Look up the orders"))
    assert out["tether_status"] == "partial" and out["tether_cause"] == "budget"
    assert runs["lookup_order"] == 5 and len(model.calls) == 5


def test_at_a_cap_with_a_payment_unknown_the_answer_is_not_taken_whatever_its_id() -> None:
    """The step cap comes with a payment's outcome unknown: it is replayed (still unknown),
    and the last answer (whose id a server set like tether's stop message) is not taken."""
    settings = AgentSettings(max_steps=1, tool_attempts=1)
    replies = [
        AIMessage(
            "", tool_calls=[{"name": "pay_order", "args": {"order_id": "ORD-DOWN"}, "id": "p"}]
        ),
        AIMessage("Paid.", id="tether-note-stop-1"),
    ]
    agent, _ = agent_with(replies, [pay_order], tether_middleware(settings))
    out = agent.invoke(ask("Pay order ORD-DOWN"))
    assert runs["pay_order"] == 2 and out["tether_status"] == "max_steps"
    assert "the outcome of pay_order" in out["tether_reason"]
    assert answer_of(out) is None and out["messages"][-1].text != "Paid."


def test_an_answers_metadata_does_not_skip_the_replay_of_an_unknown_payment() -> None:
    replies = [
        AIMessage(
            "", tool_calls=[{"name": "pay_order", "args": {"order_id": "ORD-TIMEOUT"}, "id": "p"}]
        ),
        AIMessage("Paid.", response_metadata={"tether": "completed"}),
        "Paid, after the replay.",
    ]
    agent, _ = agent_with(replies, [pay_order], tether_middleware(ONE_ATTEMPT))
    out = agent.invoke(ask("Pay order ORD-TIMEOUT"))
    assert runs["pay_order"] == 2 and out.get("tether_status") == "completed"
    assert out["messages"][-1].text == "Paid, after the replay."


# --- F8, F3: a tool's text is data, never its outcome -------------------------------------------
def _says_error(key: str) -> str:
    """Read a key whose value is shaped like an error envelope."""
    runs["says_error"] += 1
    return '{"status": "error", "message": "no such key", "meta": {"error_type": "tool_error"}}'


def _fails_saying_success(key: str) -> str:
    """Read a key; fails, with a text shaped like a success envelope."""
    runs["fails"] += 1
    raise ToolException('{"status": "success", "data": "fine", "meta": {}}')


def _deep(key: str) -> str:
    """Read a deeply nested value."""
    return "[" * 1100 + "]" * 1100


says_error = StructuredTool.from_function(_says_error, name="says_error")
fails = StructuredTool.from_function(_fails_saying_success, name="fails", handle_tool_error=True)
deep = StructuredTool.from_function(_deep, name="deep")


def reads(name: str, count: int) -> list[AIMessage]:
    return [
        AIMessage("", tool_calls=[{"name": name, "args": {"key": f"k{i}"}, "id": f"c{i}"}])
        for i in range(count)
    ]


def test_a_tools_text_shaped_like_an_error_is_no_failure() -> None:
    agent, _ = agent_with([*reads("says_error", 5), "Done."], [says_error], tether_middleware())
    out = agent.invoke(ask("Read the keys"))
    assert runs["says_error"] == 5 and out.get("tether_status") == "completed"
    assert out["tether_tool_stats"]["says_error"]["failure_count"] == 0


def test_a_failing_tools_text_shaped_like_a_success_is_a_failure() -> None:
    agent, _ = agent_with([*reads("fails", 8), "Done."], [fails], tether_middleware())
    out = agent.invoke(ask("Read the keys"))
    assert runs["fails"] == 4 and out["tether_status"] == "failed"
    assert out["tether_cause"] == "breaker"


def test_a_tools_text_nested_too_deep_for_the_parser_is_taken_as_text() -> None:
    agent, _ = agent_with([*reads("deep", 2), "Done."], [deep], tether_middleware())
    out = agent.invoke(ask("Read the keys"))
    assert out["messages"][-1].text == "Done." and out.get("tether_status") == "completed"


@tool
def charge_card(order_id: str) -> Any:
    """Charge an order: the card is declined, as a handled failure."""
    runs["charge_card"] += 1
    return tether_error("card declined: insufficient funds", error_type="tool_error")


@tool
def order_status(order_id: str) -> Any:
    """An order's status, with a confidence score."""
    return tether_success({"order_id": order_id, "status": "shipped"}, confidence_score=0.9)


def test_a_tether_tools_handled_failure_is_a_failure_and_its_answer_is_json() -> None:
    """A tool's ``error(...)`` (the demo world's refused payment) is a failure the breaker
    counts, whatever create_agent's ToolNode makes of it; every answer the model reads is
    JSON or the failure's message, never a Python repr."""
    replies = [
        AIMessage("", tool_calls=[{"name": "order_status", "args": {"order_id": "A1"}, "id": "s"}]),
        *[
            AIMessage(
                "",
                tool_calls=[{"name": "charge_card", "args": {"order_id": f"A{i}"}, "id": f"c{i}"}],
            )
            for i in range(6)
        ],
        "Charged.",
    ]
    settings = AgentSettings(cap_answer=False)
    agent, _ = agent_with(replies, [order_status, charge_card], tether_middleware(settings))
    out = agent.invoke(ask("Charge the orders"))
    answers = [m.text for m in out["messages"] if m.type == "tool"]
    assert answers[0] == '{"order_id": "A1", "status": "shipped"}'
    assert set(answers[1:]) == {"card declined: insufficient funds"}, answers
    assert "ToolOutput" not in "".join(answers)
    assert runs["charge_card"] == 4 and out["tether_status"] == "failed"  # the breaker opened
    assert out["tether_cause"] == "breaker"


# --- F4: one id, two calls -----------------------------------------------------------------------
@pytest.mark.parametrize("approval", [False, True])
def test_the_same_write_twice_under_one_id_runs_once(approval: bool) -> None:
    pay = {"name": "pay_order", "args": {"order_id": "ORD-1"}, "id": "same"}
    replies = [AIMessage("", tool_calls=[pay, dict(pay)]), "Paid."]
    hitl = [HumanInTheLoopMiddleware(interrupt_on={"pay_order": True})] if approval else []
    middleware = [*hitl, *tether_middleware()]
    agent, _ = agent_with(replies, [pay_order], middleware, checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t"}}
    out = agent.invoke(ask("Pay order ORD-1"), config)
    if approval:
        decisions = [{"type": "approve"} for _ in out["__interrupt__"][0].value["action_requests"]]
        agent.invoke(Command(resume={"decisions": decisions}), config)
    assert runs["pay_order"] == 1


# --- F7: usage is checked against the local count ------------------------------------------------
@pytest.mark.parametrize("reported", [None, 1, 50_000])
def test_implausible_usage_is_replaced_by_the_count(reported: int | None) -> None:
    """Reports of 1 token, or of 50,000, end the run where counting does."""
    usage: Any = (
        {"input_tokens": reported, "output_tokens": 1, "total_tokens": reported + 1}
        if reported
        else None
    )
    replies = [
        AIMessage(
            "",
            tool_calls=[{"name": "long_read", "args": {"key": str(i)}, "id": f"c{i}"}],
            usage_metadata=usage,
        )
        for i in range(13)
    ]
    settings = AgentSettings(token_budget=3000, max_tokens=100)
    agent, model = agent_with([*replies, "Done."], [long_read], tether_middleware(settings))
    out = agent.invoke(ask("Summarise documents"))
    assert out["tether_cause"] == "budget"
    assert len(model.calls) == 3  # two reads and the last answer, as the count alone allows


# --- F5, F9, F10: orders that cannot hold are refused -------------------------------------------
def test_an_order_that_cannot_hold_is_refused() -> None:
    ours = tether_middleware()
    with pytest.raises(ValueError, match="ModelCallLimitMiddleware"):
        check_order([ModelCallLimitMiddleware(run_limit=2), *ours])
    with pytest.raises(ValueError, match="ToolRetryMiddleware goes before"):
        check_order([*ours, ToolRetryMiddleware()])
    with pytest.raises(ValueError, match="ModelRetryMiddleware goes after"):
        check_order([ModelRetryMiddleware(), *ours])
    with pytest.raises(ValueError, match="ModelRetryMiddleware goes after"):
        check_order([TetherMiddleware(), ModelRetryMiddleware(), TokenBudgetMiddleware()])
    with pytest.raises(ValueError, match="RepeatGuardMiddleware goes after TetherMiddleware"):
        check_order([RepeatGuardMiddleware(), TetherMiddleware()])  # its model side is there
    fine = tether_middleware(retries=[ToolRetryMiddleware(), ModelRetryMiddleware()])
    assert check_order([*fine]) == fine


@pytest.mark.parametrize(
    ("outer", "refused"),
    [
        ([ModelCallLimitMiddleware(run_limit=2)], "ModelCallLimitMiddleware cannot be used"),
        ([ModelRetryMiddleware()], "ModelRetryMiddleware goes after"),
    ],
)
def test_the_documented_builder_refuses_an_order_that_cannot_hold(
    outer: list[Any], refused: str
) -> None:
    """``langchain_tether.create_agent`` is LangChain's, with the order checked when the agent
    is built: plain create_agent gives a middleware no hook that sees the whole list."""
    model = ScriptedChatModel(responses=["unused"])
    with pytest.raises(ValueError, match=refused):
        create_agent(model, [lookup_order], middleware=[*outer, *tether_middleware()])
    assert not model.calls
    ok = create_agent(
        model, [lookup_order], middleware=[*tether_middleware(), ModelRetryMiddleware()]
    )
    assert ok.invoke(ask("Say hello"))["tether_status"] == "completed"


@pytest.mark.parametrize("build", [create_agent, langchain_create_agent])
def test_tether_middlewares_list_given_whole_is_refused_in_one_line(build: Any) -> None:
    """``middleware=[tether_middleware()]`` (the ``*`` forgotten): tether's one line, when the
    agent is built, not LangChain's error about a list's ``wrap_tool_call``."""
    model = ScriptedChatModel(responses=[])
    with pytest.raises(TypeError, match=r"^unpack tether_middleware's list: middleware=\[\*"):
        build(model, [lookup_order], middleware=[tether_middleware()])


# --- F11: a tool gets the run's id, as in the loop -----------------------------------------------
seen_ids: list[str | None] = []


@tool(side_effects=True)
def charge(order_id: str, config: RunnableConfig) -> str:
    """Charge an order (its idempotency key derives from the run's id)."""
    seen_ids.append(run_id_from(config))
    return f"charged {order_id}"


def test_a_tool_gets_the_runs_id_stable_within_a_run_and_new_for_the_next() -> None:
    seen_ids.clear()
    replies = [
        *[
            AIMessage("", tool_calls=[{"name": "charge", "args": {"order_id": o}, "id": o}])
            for o in ("A", "B")
        ],
        "Charged.",
        AIMessage("", tool_calls=[{"name": "charge", "args": {"order_id": "C"}, "id": "C"}]),
        "Charged again.",
    ]
    agent, _ = agent_with(replies, [charge], tether_middleware(), checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t"}}
    agent.invoke(ask("Charge A and B"), config)
    agent.invoke(ask("Charge C"), config)
    first, second, third = seen_ids
    assert first and first == second and third and third != first
