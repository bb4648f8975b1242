"""The small-model profile's final answer: picked among the facts the results hold, one of
each group, joined; an answer that states nothing the run found ends ``failed``
(``unbacked``); a call's values held by a result are chosen among them; the tools the task
asks for run first, then only the answer is offered."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, Field
from tether import STATUSES, AgentSettings, ToolRegistry, build_graph, tool
from tether.decisions.grounding import Call, fold
from tether.decisions.offer import Offer, step_offer
from tether.llm.structured import action_schema, parse_json_action
from tether.testing import ScriptedChatModel, run_traced
from tether.vocabulary import CAUSES
from tether_local.facts import (
    answer_facts,
    asked_tools,
    found_nothing,
    held_arguments,
)
from tether_local.profile import ungrounded

ORDER = "ORD-2024-003"
SMALL = AgentSettings(small_model=True)
SHIPPED = {"order_id": ORDER, "status": "shipped", "total_weight_kg": "1.35"}


class OrderArgs(BaseModel):
    order_id: str = Field(pattern=r"^ORD-\d{4}-\d{3,}$")


@tool(args_schema=OrderArgs)
def query_order(order_id: str) -> dict[str, Any]:
    """Look up an order's status."""
    return {**SHIPPED, "order_id": order_id}


@tool
def discount(subtotal: float) -> str:
    """Work out the discount on a subtotal."""
    return f"{subtotal * 0.1:.2f}"


@tool(side_effects=True)
def cancel_order(order_id: str) -> str:
    """Cancel an order."""
    return "cancelled"


def _state(task: str, *results: Any) -> Any:
    entries = [{"result": {"status": "success", "data": data, "meta": {}}} for data in results]
    return {"task": task, "tool_buffer": entries}


# --- the facts offered ------------------------------------------------------------------------


def test_facts_are_the_results_plain_values_less_the_tasks_own() -> None:
    facts = answer_facts(_state("Tell me about the order", SHIPPED), [])
    assert facts == (
        (
            f"The order id is {ORDER}.",
            "The status is shipped.",
            "The total weight kg is 1.35.",
        ),
    )
    (own,) = answer_facts(_state(f"Tell me about {ORDER}", SHIPPED), [])
    assert own[0] == "The status is shipped."  # the task's own id is no fact found
    assert answer_facts(_state("Tell me about the order"), []) == ()  # nothing ran yet


def test_only_the_keys_the_task_names_are_offered_when_it_names_any() -> None:
    task = f"What is the status of order {ORDER}?"
    statuses = {"order_id": ORDER, "status": "shipped", "payment_status": "succeeded"}
    facts = answer_facts(_state(task, statuses, {"status": "paid"}), [])
    assert facts == (("The status is shipped.", "The status is paid."),)  # the model picks


def test_a_task_names_a_key_in_a_long_word_no_other_key_has() -> None:
    fee = {"shipping_fee": "0.00", "total_weight_kg": "1.35", "total_price": "9.00"}
    task = f"What is the shipping fee and the weight of order {ORDER}?"
    assert answer_facts(_state(task, fee), []) == (
        ("The shipping fee is 0.00.",),
        ("The total weight kg is 1.35.",),
    )
    (either,) = answer_facts(_state(f"The total of order {ORDER}?", fee), [])
    assert len(either) == 3  # "total" is two keys' word: it names neither, and all are offered
    (own,) = answer_facts(_state(f"The order id of {ORDER}?", SHIPPED), [])
    assert len(own) == 2  # the key named holds only the task's own value: every fact offered


def test_a_results_top_level_values_are_its_facts_when_it_has_any() -> None:
    """A payment's status inside an order is not the order's (SmolLM2 picked it)."""
    paid = {**SHIPPED, "payments": [{"amount": "9.00", "status": "succeeded"}]}
    facts = answer_facts(_state(f"What is the status of order {ORDER}?", paid), [])
    assert facts == (("The status is shipped.",),)
    nested = {"orders": [{"order_id": "ORD-2024-009", "status": "paid"}]}
    assert answer_facts(_state("my orders", nested), []) == (
        ("The order id is ORD-2024-009.", "The status is paid."),
    )


class Filter(BaseModel):
    order_id: str = Field(description="Order id / 订单号")
    status: str = Field(description="Only orders with this status / 按订单状态筛选")


@tool(args_schema=Filter)
def list_orders(order_id: str, status: str) -> str:
    """List orders."""
    return ""


def test_a_chinese_task_names_a_key_in_the_words_of_an_argument_of_that_name() -> None:
    """状态 is the status argument's own word; 订单, which both descriptions have, names none.
    A Chinese task's facts are written in its punctuation."""
    task = f"订单 {ORDER} 的状态是什么？"
    assert answer_facts(_state(task, SHIPPED), [list_orders]) == (("status：shipped。",),)
    assert len(answer_facts(_state(task, SHIPPED), [])[0]) == 2  # no description to read
    assert len(answer_facts(_state(f"订单 {ORDER}", SHIPPED), [list_orders])[0]) == 2


# --- the schema, and reading the picks: untrusted model output ---------------------------------


def test_the_answer_branch_is_one_fact_of_each_group_or_capped_text() -> None:
    groups = (("The status is shipped.", "The status is paid."), ("The discount is 5.00.",))
    branch = action_schema([], small=True, facts=groups)["properties"]["action"]["anyOf"][0]
    answer = branch["properties"]["final_answer"]
    assert answer["prefixItems"] == [{"enum": list(group)} for group in groups]
    assert answer["minItems"] == answer["maxItems"] == 2
    text = action_schema([], small=True)["properties"]["action"]["anyOf"][0]
    assert text["properties"]["final_answer"]["type"] == "string"


ALLOWED = {"kind", "thought", "answer", "raw", "error", "tool", "arguments", "repairs"}
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)


@given(json_values, st.text(max_size=12))
def test_any_final_answer_value_reads_as_an_answer_or_a_parse_failure(
    value: Any, thought: str
) -> None:
    reply = json.dumps({"action": {"final_answer": value}, "thought": thought})
    proposal = parse_json_action(reply)
    assert set(proposal) <= ALLOWED  # no gate, check or verdict: only the loop sets those
    picks = value if isinstance(value, list) and all(isinstance(v, str) for v in value) else None
    text = " ".join(dict.fromkeys(picks)) if picks is not None else value
    if isinstance(text, str) and text.strip():
        assert proposal["kind"] == "final" and proposal["answer"] == text
    else:
        assert proposal["kind"] == "invalid"


def test_the_same_fact_picked_twice_is_stated_once() -> None:
    reply = json.dumps({"action": {"final_answer": ["The status is paid."] * 2 + ["x"]}})
    assert parse_json_action(reply)["answer"] == "The status is paid. x"


# --- what the answer states -------------------------------------------------------------------


def _found_nothing(answer: str, *, fresh: bool = True, wrote: bool = False) -> bool:
    task = f"What is the status of order {ORDER}?"
    grounds = fold(None, task, Call("query_order", {"order_id": ORDER}, SHIPPED))
    if wrote:
        grounds = fold(grounds, task, Call("cancel_order", {"order_id": ORDER}, "cancelled"))
    outcomes = ["success"] if fresh else ["stale"]
    state: Any = {"task": task, "grounds": grounds, "calls": {"k": {"outcomes": outcomes}}}
    return found_nothing(state, answer, [query_order, cancel_order])


def test_an_answer_with_nothing_a_result_holds_states_nothing_found() -> None:
    assert _found_nothing("Your answer is already done, and the task is done.")
    assert _found_nothing("1.0.0.0.0.1:8080:8080:8080")  # what SmolLM2 wrote
    assert _found_nothing(f"The order id is {ORDER}.")  # the task's own id: nothing found
    assert not _found_nothing("The status is shipped.")
    assert not _found_nothing("It weighs 1.35 kg.")  # a number a result holds
    assert not _found_nothing("Which order do you mean?")  # a question to the user
    assert not _found_nothing("I cannot do that.")  # a refusal
    assert not _found_nothing("Done.", wrote=True)  # a change was made
    assert not _found_nothing("Done.", fresh=False)  # nothing ran in this run


@given(st.text(max_size=200))
def test_any_answer_text_is_read_without_error_and_a_found_word_backs_it(text: str) -> None:
    """The answer is the model's text: whatever it holds, the reading ends in a bool; with a
    word a result holds and the task does not (``shipped``), it is never unbacked; with a
    change made or nothing run in this run, nothing is."""
    assert isinstance(_found_nothing(text), bool)
    assert not _found_nothing(f"{text} shipped")
    assert not _found_nothing(text, wrote=True)
    assert not _found_nothing(text, fresh=False)


# --- through the graph ------------------------------------------------------------------------


def _run(task: str, answer: Any, **settings: Any) -> tuple[dict[str, Any], ScriptedChatModel]:
    call = {"action": {"tool": "query_order", "arguments": {"order_id": ORDER}}}
    final = {"action": {"final_answer": answer}}
    model = ScriptedChatModel(responses=[json.dumps(call), json.dumps(final)])
    options = {"small_model": True, "protocol": "json_schema"} | settings
    graph = build_graph(AgentSettings(**options), model=model, registry=ToolRegistry([query_order]))
    state, _ = run_traced(graph, {"task": task})
    return state, model


def _answer_branch(model: ScriptedChatModel, i: int) -> dict[str, Any]:
    schema = model.calls[i].kwargs["response_format"]["json_schema"]["schema"]
    branch: dict[str, Any] = schema["properties"]["action"]["anyOf"][-1]["properties"]
    return branch["final_answer"]


def test_a_picked_answer_is_joined_and_taken() -> None:
    state, model = _run(f"What is the status of order {ORDER}?", ["The status is shipped."])
    assert _answer_branch(model, 1)["prefixItems"] == [{"enum": ["The status is shipped."]}]
    assert (state["status"], state["cause"]) == ("completed", "answer")
    assert state["answer"] == "The status is shipped."
    zh, _ = _run(f"订单 {ORDER} 的状态是什么？", ["status：shipped。"])
    assert zh["answer"] == "status：shipped。"


def test_an_answer_stating_nothing_found_ends_failed_unbacked() -> None:
    state, _ = _run(f"What is the status of order {ORDER}?", "Your task is done.")
    assert (state["status"], state["cause"]) == ("failed", "unbacked")
    assert state["reason"] == CAUSES["unbacked"] and state["answer"] is None
    assert STATUSES[state["status"]].exit_code == 1


def test_without_the_profile_an_answer_stating_nothing_found_is_taken() -> None:
    state, model = _run(
        f"What is the status of order {ORDER}?", "Your task is done.", small_model=False
    )
    assert (state["status"], state["answer"]) == ("completed", "Your task is done.")
    assert _answer_branch(model, 1) == {"type": "string"}  # no facts offered


def test_a_server_ignoring_the_schema_cannot_have_an_answer_picked_off_the_facts() -> None:
    """The picks are the model's words like any answer: what no result holds is unbacked."""
    state, _ = _run(f"What is the status of order {ORDER}?", ["The status is delivered."])
    assert (state["status"], state["cause"]) == ("failed", "unbacked")


# --- a task that asks for two tools: each value of the second call is one a result holds ------


class PriceArgs(BaseModel):
    subtotal: float | str = Field(description="Order subtotal / 订单小计")
    member_tier: str = Field("none", description="Member tier / 会员等级")


@tool(args_schema=PriceArgs)
def compute_discount(subtotal: float | str, member_tier: str = "none") -> dict[str, Any]:
    """Price an order: the member discount. 计算折扣与应付金额。"""
    return {"discount": "5.00" if member_tier == "gold" else "0.00", "payable": "95.00"}


@tool
def calculate(expression: str) -> str:
    """Evaluate an arithmetic expression. 精确计算算式。"""
    return "0"


class LookupArgs(BaseModel):
    order_id: str = Field(pattern=r"^ORD-\d{4}-\d{3,}$", description="Order id / 订单号")
    status: str | None = Field(None, description="Only with this status / 按订单状态筛选")


@tool(args_schema=LookupArgs)
def query_priced(order_id: str, status: str | None = None) -> dict[str, Any]:
    """Look up an order. 查询订单的状态与详情。"""
    return {"order_id": order_id, "status": "pending", "subtotal": "100.00", "member_tier": "gold"}


PRICED = [query_priced, compute_discount, calculate, cancel_order]
TASK_ZH = f"查询订单 {ORDER} 的状态并计算折扣"


def test_a_task_asks_for_the_tools_it_names_in_words_of_their_own() -> None:
    assert asked_tools(TASK_ZH, PRICED) == ["query_priced", "compute_discount"]  # 计算 is shared
    assert asked_tools(f"查询订单 {ORDER} 的状态", PRICED) == ["query_priced"]
    assert asked_tools(f"查询订单 {ORDER} 的状态，不要计算折扣", PRICED) == ["query_priced"]
    assert asked_tools("cancel it", PRICED) == []  # a write is never asked for here


def test_a_read_tool_needing_an_amount_waits_for_one_in_the_context() -> None:
    tools = [discount, query_order, cancel_order]
    assert ungrounded(tools, (), amounts=False) == {"discount", "query_order"}  # not a write
    grounded = ((r"^ORD-\d{4}-\d{3,}$", (ORDER,)),)
    assert ungrounded(tools, grounded, amounts=False) == {"discount"}
    assert ungrounded(tools, grounded, amounts=True) == set()


def test_an_argument_named_like_a_results_key_takes_the_values_held_under_it() -> None:
    state = _state(TASK_ZH, {"order_id": ORDER, "subtotal": "100.00", "member_tier": "gold"})
    held = held_arguments(state, PRICED)
    assert held == (("member_tier", ("gold",)), ("subtotal", ("100.00",)))  # not the id
    schema = action_schema([compute_discount], small=True, held=dict(held))
    arguments = schema["properties"]["action"]["anyOf"][0]["properties"]["arguments"]
    assert arguments["properties"]["member_tier"] == {"enum": ["gold"]}
    assert set(arguments["required"]) == {"subtotal", "member_tier"}  # asked for, not left out
    assert held_arguments(_state(TASK_ZH), PRICED) == ()  # nothing ran: nothing held


def test_the_offer_refuses_a_held_argument_off_its_values() -> None:
    offer = Offer(tools=(compute_discount,), held=(("subtotal", ("100.00",)),))
    assert offer.refusal(compute_discount, {"subtotal": "100.00"}) is None
    refused = offer.refusal(compute_discount, {"subtotal": "10.00", "member_tier": "x"})
    assert refused == "names values no task or successful result holds: ['10.00']"


def _run_priced(replies: list[Any], **settings: Any) -> tuple[dict[str, Any], ScriptedChatModel]:
    model = ScriptedChatModel(responses=[json.dumps(reply) for reply in replies])
    options = {"small_model": True, "protocol": "json_schema"} | settings
    graph = build_graph(AgentSettings(**options), model=model, registry=ToolRegistry(PRICED))
    state, _ = run_traced(graph, {"task": TASK_ZH})
    return state, model


def _branches(model: ScriptedChatModel, i: int) -> list[dict[str, Any]]:
    schema = model.calls[i].kwargs["response_format"]["json_schema"]["schema"]
    return list(schema["properties"]["action"]["anyOf"])


def _tools_at(model: ScriptedChatModel, i: int) -> list[str]:
    branches = _branches(model, i)
    return [b["properties"]["tool"]["const"] for b in branches if "tool" in b["properties"]]


def _call_of(name: str, **arguments: Any) -> dict[str, Any]:
    return {"action": {"tool": name, "arguments": arguments}}


def test_the_asked_tools_run_in_turn_and_the_answer_states_one_fact_of_each_key() -> None:
    picks = ["status：pending。", "discount：5.00。"]
    state, model = _run_priced(
        [
            _call_of("query_priced", order_id=ORDER),
            _call_of("compute_discount", subtotal="100.00", member_tier="gold"),
            {"action": {"final_answer": picks}},
        ]
    )
    assert [_tools_at(model, i) for i in range(3)] == [
        ["query_priced"],  # compute_discount waits for an amount, calculate is not asked for
        ["compute_discount"],
        [],  # then only the answer
    ]
    assert all("final_answer" not in b["properties"] for b in _branches(model, 1))
    answer = _branches(model, 2)[0]["properties"]["final_answer"]
    assert [group["enum"][0] for group in answer["prefixItems"]][::2] == picks[:1]
    assert {"discount：5.00。"} in [set(group["enum"]) for group in answer["prefixItems"]]
    assert (state["status"], state["answer"]) == ("completed", "status：pending。 discount：5.00。")


def test_with_look_first_off_the_task_asks_for_no_tool_first() -> None:
    state, model = _run_priced(
        [
            _call_of("query_priced", order_id=ORDER),
            {"action": {"final_answer": ["status：pending。"]}},
        ],
        look_first=False,
    )
    assert "calculate" in _tools_at(model, 0) and _tools_at(model, 1) != []
    assert state["status"] == "completed"


def test_a_server_that_ignores_the_schema_is_refused_a_value_no_result_holds() -> None:
    state, _ = _run_priced(
        [
            _call_of("query_priced", order_id=ORDER),
            _call_of("compute_discount", subtotal="10.00", member_tier="gold"),  # invented
            {"action": {"final_answer": ["status：pending。"]}},
        ]
    )
    assert [record["kind"] for record in state["history"][:2]] == ["success", "refused"]
    assert "10.00" in state["history"][1]["summary"]


def test_a_task_asking_for_a_change_is_not_closed_to_tools_once_its_reads_ran() -> None:
    def offer_after_lookup(task: str) -> Offer:
        state = _state(task, {"order_id": ORDER, "status": "pending"})
        state["tool_buffer"][0]["tool"] = "query_priced"
        grounds = fold(None, task, Call("query_priced", {"order_id": ORDER}, {}))
        ran = {"step": 1, "kind": "success", "summary": "", "fingerprint": "query_priced{}"}
        return step_offer(state | {"grounds": grounds, "history": [ran]}, PRICED, SMALL)

    read = offer_after_lookup(f"查询订单 {ORDER} 的状态")
    assert {name for name, _ in read.withheld} == {t.name for t in PRICED}  # the answer alone
    change = offer_after_lookup(f"查询订单 {ORDER} 的状态, then cancel the order")
    assert "cancel_order" not in dict(change.withheld) and not change.final_only


def test_a_profile_cannot_lift_the_caps_last_answer(monkeypatch: Any) -> None:
    """At a cap (``closing``) only the answer is offered, whatever a profile's refine says."""
    from dataclasses import replace

    from tether.decisions import offer as offer_module
    from tether.decisions.profile import NoProfile

    class Lifts(NoProfile):
        def refine(self, offer: Offer, state: Any, tools: Any, settings: Any) -> Offer:
            return replace(offer, final_only=False, calls_only=True)

    monkeypatch.setattr(offer_module, "profile_for", lambda settings: Lifts())
    state: Any = {"task": "t", "closing": "max_steps"}
    made = step_offer(state, [], AgentSettings())
    assert made.final_only and not made.calls_only
