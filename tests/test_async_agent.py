"""AsyncAgent does what Agent does, awaited: the same runs, pauses, answers, errors and saved
runs, on the same run store file, so either agent can pick up the other's runs."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from tether import Agent, AgentSettings, AsyncAgent, TetherError, ToolRegistry, tool
from tether.agent import UnknownRunError
from tether.control import ApprovalError, open_async_run_store, open_run_store
from tether.testing import ScriptedChatModel

from tests.scripts import act, final, lookup

TASK = "pay order A1"
APPROVE = {"decisions": [{"type": "approve"}]}
REJECT = {"decisions": [{"type": "reject", "message": "amount looks wrong"}]}
PAY = act("pay_order", '{"order_id": "A1", "amount": 5}')
PAID = [act("lookup", '{"key": "A1"}'), PAY, final("paid A1")]
NOT_PAID = [act("lookup", '{"key": "A1"}'), PAY, final("A1 was not paid")]


def registry(ledger: list[tuple[str, int]]) -> ToolRegistry:
    """lookup, and a side-effecting pay_order that records each payment in ``ledger``; a
    fixed clock, so results (and the prompts quoting them) do not depend on timing."""

    @tool(side_effects=True)
    def pay_order(order_id: str, amount: int) -> str:
        """Pay an order."""
        ledger.append((order_id, amount))
        return f"paid {amount} for {order_id}"

    return ToolRegistry([lookup, pay_order], clock=lambda: 0.0)


@contextmanager
def sync_agent(path: Path, model: ScriptedChatModel, ledger: list[Any]) -> Iterator[Agent]:
    with open_run_store(path) as store:
        yield Agent(AgentSettings(), store=store, registry=registry(ledger), model=model)


def on_async_agent(
    path: Path, model: ScriptedChatModel, ledger: list[Any], work: Callable[[AsyncAgent], Any]
) -> Any:
    """``await work(agent)`` on an AsyncAgent over the store at ``path``, in a fresh loop."""

    async def main() -> Any:
        async with open_async_run_store(path) as store:
            agent = AsyncAgent(AgentSettings(), store=store, registry=registry(ledger), model=model)
            return await work(agent)

    return asyncio.run(main())


def outcome(result: Any) -> dict[str, Any]:
    """What a finished run should agree on between the two agents."""
    state = result.state
    keys = ("status", "reason", "answer", "steps", "history", "tool_buffer", "usage")
    return {key: state.get(key) for key in keys} | {"pending": result.pending}


def test_a_run_completes_and_is_saved(tmp_path: Path) -> None:
    replies = [act("lookup", '{"key": "a"}'), final("value of a")]
    model = ScriptedChatModel(responses=replies)
    events: list[str] = []
    tokens: list[str] = []

    class Recorder:
        def event(self, event: dict[str, Any]) -> None:
            events.append(event["event"])

        def token(self, text: str) -> None:
            tokens.append(text)

    async def work(agent: AsyncAgent) -> Any:
        result = await agent.run("look a up", thread_id="done", observer=Recorder())
        return result, await agent.runs(), await agent.show("done"), await agent.trace("done")

    result, runs, shown, trace = on_async_agent(tmp_path / "runs.sqlite", model, [], work)
    assert result.status == "completed" and result.finished
    assert result.state["answer"] == "value of a"
    assert result.state["tool_buffer"][0]["result"]["data"] == "value of a"
    assert [(r.thread_id, r.status, r.steps) for r in runs] == [("done", "completed", 2)]
    assert [s["proposal"] for s in shown["steps"]] == ["lookup", "final"]
    assert [e["event"] for e in trace] == events  # the log holds what was streamed
    assert events[0] == "start" and events[-1] == "finish"
    assert "".join(tokens) == "".join(replies)  # the model's text, as it came
    with sync_agent(tmp_path / "runs.sqlite", model, []) as agent:
        assert agent.show("done") == shown  # the sync agent reads the same saved run


def test_a_finished_thread_takes_the_next_message_of_its_conversation(tmp_path: Path) -> None:
    """A thread whose run finished takes a second message, on either agent: the loop's
    prompt for it holds the first message and the answer it got."""
    replies = [act("lookup", '{"key": "a"}'), final("value of a"), final("value of a, still")]
    model = ScriptedChatModel(responses=replies)
    with sync_agent(tmp_path / "runs.sqlite", model, []) as agent:
        agent.run("look a up", thread_id="chat")
    second = on_async_agent(
        tmp_path / "runs.sqlite", model, [], lambda a: a.run("and now?", thread_id="chat")
    )
    assert second.status == "completed" and second.state["answer"] == "value of a, still"
    prompt = "\n".join(m.text for m in model.calls[-1].messages)
    assert "look a up" in prompt and "value of a" in prompt and "and now?" in prompt


@pytest.mark.parametrize(("replies", "answer"), [(PAID, APPROVE), (NOT_PAID, REJECT)])
def test_pause_and_resume_end_as_the_sync_agent_ends(
    tmp_path: Path, replies: list[str], answer: dict[str, Any]
) -> None:
    sync_ledger: list[Any] = []
    sync_model = ScriptedChatModel(responses=list(replies))
    with sync_agent(tmp_path / "sync.sqlite", sync_model, sync_ledger) as agent:
        sync_paused = agent.run(TASK, thread_id="t")
        sync_done = agent.resume("t", answer)
        sync_steps = agent.show("t")["steps"]

    async_ledger: list[Any] = []
    async_model = ScriptedChatModel(responses=list(replies))

    async def work(agent: AsyncAgent) -> Any:
        paused = await agent.run(TASK, thread_id="t")
        assert async_ledger == []  # nothing paid while waiting
        with pytest.raises(TetherError, match="unfinished run: resume it instead"):
            await agent.run("pay order B2 instead", thread_id="t")  # the run waits: refused
        return paused, await agent.resume("t", answer), (await agent.show("t"))["steps"]

    paused, done, steps = on_async_agent(tmp_path / "async.sqlite", async_model, async_ledger, work)
    assert paused.pending is not None and not paused.finished
    assert paused.pending["action_requests"][0]["args"] == {"order_id": "A1", "amount": 5}
    assert paused.pending == sync_paused.pending
    assert done.status == "completed"
    assert outcome(done) == outcome(sync_done)
    assert steps == sync_steps
    assert async_ledger == sync_ledger == ([("A1", 5)] if answer is APPROVE else [])
    assert [c.messages for c in async_model.calls] == [c.messages for c in sync_model.calls]


BAD_ANSWERS: list[Any] = [
    None,
    "approve",
    {"decisions": []},
    {"decisions": [{"type": "respond", "message": "done"}]},
    {"decisions": [{"type": "edit", "edited_action": {"name": "lookup", "args": {"key": "b"}}}]},
    {"decisions": [{"type": "edit", "edited_action": {"name": "pay_order", "args": {}}}]},
]


def test_a_bad_answer_is_refused_as_the_sync_agent_refuses_it(tmp_path: Path) -> None:
    sync_errors = []
    with sync_agent(tmp_path / "sync.sqlite", ScriptedChatModel(responses=PAID), []) as agent:
        agent.run(TASK, thread_id="t")
        for answer in BAD_ANSWERS:
            with pytest.raises(ApprovalError) as caught:
                agent.resume("t", answer)
            sync_errors.append(str(caught.value))

    ledger: list[Any] = []

    async def work(agent: AsyncAgent) -> Any:
        await agent.run(TASK, thread_id="t")
        before = await agent.show("t")
        errors = []
        for answer in BAD_ANSWERS:
            with pytest.raises(ApprovalError) as caught:
                await agent.resume("t", answer)
            errors.append(str(caught.value))
        still = await agent.status("t"), await agent.show("t")
        return before, errors, still, await agent.resume("t", APPROVE)

    model = ScriptedChatModel(responses=PAID)
    before, errors, (status, after), done = on_async_agent(
        tmp_path / "async.sqlite", model, ledger, work
    )
    assert errors == sync_errors
    assert "edited arguments rejected" in errors[-1]
    assert status.pending is not None and status.status == "running"
    assert after == before  # the saved run is untouched: still waiting, same steps
    assert done.status == "completed" and ledger == [("A1", 5)]  # and can still be approved


def test_cancel_from_the_sync_side_stops_an_async_run(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    model = ScriptedChatModel(responses=[act("slow_step", '{"key": "a"}'), final("never")])
    with sync_agent(path, ScriptedChatModel(responses=[]), []) as operator:

        @tool
        def slow_step(key: str) -> str:
            """While this runs, an operator cancels the run from a sync Agent."""
            operator.cancel("t6", "operator pressed stop")
            return "done"

        async def main() -> Any:
            async with open_async_run_store(path) as store:
                tools = ToolRegistry([slow_step])
                agent = AsyncAgent(AgentSettings(), store=store, registry=tools, model=model)
                return await agent.run("work", thread_id="t6")

        result = asyncio.run(main())
        assert operator.status("t6").status == "cancelled"
    assert result.status == "cancelled"
    assert "operator pressed stop" in result.state["reason"]
    assert len(model.calls) == 1  # stopped before the second model call


def test_an_unknown_thread_is_the_same_error(tmp_path: Path) -> None:
    no_model = ScriptedChatModel(responses=[])
    with (
        sync_agent(tmp_path / "runs.sqlite", no_model, []) as agent,
        pytest.raises(UnknownRunError) as sync_caught,
    ):
        agent.status("nope")

    async def work(agent: AsyncAgent) -> list[str]:
        messages = []
        calls = [agent.status, agent.resume, agent.cancel, agent.show]
        for call in calls:
            with pytest.raises(UnknownRunError) as caught:
                await call("nope")
            messages.append(str(caught.value))
        return messages

    messages = on_async_agent(tmp_path / "runs.sqlite", no_model, [], work)
    assert messages == [str(sync_caught.value)] * 4
    assert messages[0] == "no saved run with thread id 'nope'"


def test_a_run_started_by_agent_is_resumed_by_async_agent(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    ledger: list[Any] = []
    model = ScriptedChatModel(responses=PAID)  # one script, whichever agent calls it
    with sync_agent(path, model, ledger) as agent:
        assert agent.run(TASK, thread_id="t").pending is not None

    async def work(agent: AsyncAgent) -> Any:
        waiting = await agent.runs()
        return waiting, await agent.resume("t", APPROVE)

    waiting, done = on_async_agent(path, model, ledger, work)
    assert [(r.thread_id, r.waiting_for) for r in waiting] == [("t", "approval")]
    assert done.status == "completed" and done.state["answer"] == "paid A1"
    assert ledger == [("A1", 5)]
    assert model.remaining == 0
    with sync_agent(path, model, ledger) as agent:
        shown = agent.show("t")
    assert [s["proposal"] for s in shown["steps"]] == ["lookup", "pay_order", "final"]
    assert shown["steps"][1]["approval"] == "approve"  # traced by the async side


def test_a_run_started_by_async_agent_is_resumed_by_agent(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    ledger: list[Any] = []
    model = ScriptedChatModel(responses=NOT_PAID)

    async def work(agent: AsyncAgent) -> Any:
        return await agent.run(TASK, thread_id="t")

    assert on_async_agent(path, model, ledger, work).pending is not None
    with sync_agent(path, model, ledger) as agent:
        assert agent.status("t").pending is not None
        done = agent.resume("t", REJECT)
        trace = [e["event"] for e in agent.trace("t")]
    assert done.status == "completed" and done.state["answer"] == "A1 was not paid"
    assert ledger == []
    assert done.state["history"][1]["kind"] == "rejected"
    assert trace.count("start") == 1 and trace[-1] == "finish"  # one trace across both
    assert trace.count("approval") == 1
