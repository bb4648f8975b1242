"""The small-model profile, pinned on what a scripted model was sent (its recorded calls)."""

from __future__ import annotations

import json
import os
import re
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from tether import AgentSettings, ToolRegistry, build_graph, tool
from tether.decisions import profile as profile_module
from tether.decisions.offer import step_offer
from tether.decisions.profile import NO_PROFILE, profile_for, small_profile
from tether.decisions.toolpick import callable_from, select_tools
from tether.extras import MissingExtraError
from tether.llm.protocols import FINAL_ONLY_NOTE, JSON_FORMAT, REACT_FORMAT, first_sentence
from tether.llm.schema_shape import FREE_TEXT_CHARS, REPEAT_SLACK, grammar_pattern
from tether.llm.structured import SMALL_ANSWER_CHARS
from tether.testing import ScriptedChatModel, run_traced
from tether_local import default_threads, idle_cores, profile
from tether_local.profile import WITHHELD_WHY, rejected_writes, withheld
from tether_world import World
from tether_world.fields import OrderId, PaymentId

ORDER = "ORD-2024-001"


@tool
def query_order(order_id: OrderId) -> str:
    """Look up an order's status and amount."""
    return f"{order_id}: pending, 100.00"


@tool
def convert_currency(amount: str, currency: str) -> str:
    """Convert an amount of money into another currency."""
    return f"{amount} {currency}"


@tool
def send_note(text: str) -> str:
    """Send a free-text note to the customer."""
    return "sent"


@tool
def weather(city: str) -> str:
    """Tell the weather forecast in a city."""
    return "sunny"


TOOLS = [query_order, convert_currency, send_note, weather]


def _call(name: str, **arguments: Any) -> str:
    return json.dumps({"action": {"tool": name, "arguments": arguments}, "thought": "go"})


def _final(answer: str) -> str:
    return json.dumps({"action": {"final_answer": answer}, "thought": "done"})


def _run(
    replies: list[str | AIMessage],
    task: str = f"What is the status of order {ORDER}?",
    tools: list[Any] = TOOLS,
    **settings: Any,
) -> tuple[dict[str, Any], Any]:
    state, model, _ = _run_traced(replies, task, tools, **settings)
    return state, model


def _run_traced(
    replies: list[str | AIMessage], task: str, tools: list[Any], **settings: Any
) -> tuple[dict[str, Any], Any, list[Any]]:
    model = ScriptedChatModel(responses=replies)
    options = {  # the profile's own limits, without the checks that add a model call
        "small_model": True,
        "protocol": "json_schema",
        "offered_tools": 2,
        "check_final": False,
        "look_first": False,
        "cap_answer": False,
    } | settings
    graph = build_graph(AgentSettings(**options), model=model, registry=ToolRegistry(tools))
    state, trace = run_traced(graph, {"task": task})
    return state, model, list(trace)


def _arguments(model: ScriptedChatModel, i: int, tool_name: str) -> dict[str, Any]:
    branches = _schema(model, i)["properties"]["action"]["anyOf"]
    return next(
        b["properties"]["arguments"]
        for b in branches
        if b["properties"].get("tool") == {"const": tool_name}
    )


def _schema(model: ScriptedChatModel, i: int) -> dict[str, Any]:
    schema: dict[str, Any] = model.calls[i].kwargs["response_format"]["json_schema"]["schema"]
    return schema


def _offered(model: ScriptedChatModel, i: int) -> list[str]:
    branches = _schema(model, i)["properties"]["action"]["anyOf"]
    return [b["properties"]["tool"]["const"] for b in branches if "tool" in b["properties"]]


def test_profile_request_is_capped_action_alone_and_cold() -> None:
    state, model = _run([_final(f"{ORDER} is pending")])
    schema = _schema(model, 0)
    assert list(schema["properties"]) == ["action"]  # no thought: SmolLM2's said nothing
    final = schema["properties"]["action"]["anyOf"][-1]["properties"]["final_answer"]
    assert final["maxLength"] == SMALL_ANSWER_CHARS
    assert model.calls[0].kwargs["temperature"] == 0.0
    assert set(_offered(model, 0)) == {"query_order", "convert_currency"}  # k=2, best matches
    assert state["status"] == "completed"


def test_a_tool_whose_id_the_context_lacks_is_listed_but_not_callable() -> None:
    _, model = _run([_final("which order?")], task="What is the status of my order?")
    assert _offered(model, 0) == ["convert_currency"]
    assert "- query_order(order_id)" in str(model.calls[0].messages[0].content)


def test_an_id_pattern_nothing_in_the_context_matches_is_bounded() -> None:
    task = "What is the status of my order?"  # only query_order: withholding it would leave none
    _, model = _run([_final("which order?")], task=task, tools=[query_order])
    order_id = _arguments(model, 0, "query_order")["properties"]["order_id"]
    bounded = f"^ORD-[0-9]{{4}}-[0-9]{{3,{3 + REPEAT_SLACK}}}$"  # an open repeat gets a bound
    assert order_id["pattern"] == bounded and "enum" not in order_id


def test_free_text_arguments_are_capped_only_under_the_profile() -> None:
    _, small = _run([_final("x")], offered_tools=None)
    _, full = _run([_final("x")], small_model=False, offered_tools=None)
    note = _schema(small, 0)["properties"]["action"]["anyOf"][2]["properties"]["arguments"]
    assert note["properties"]["text"]["maxLength"] == FREE_TEXT_CHARS
    assert set(_offered(small, 0)) == {t.name for t in TOOLS}  # offered_tools unset: k=4
    plain = _schema(full, 0)["properties"]["action"]["anyOf"][2]["properties"]["arguments"]
    assert "maxLength" not in plain["properties"]["text"]
    assert list(_schema(full, 0)["properties"]) == ["thought", "action"]
    assert full.calls[0].kwargs["temperature"] == AgentSettings().temperature


def test_repeated_successful_call_forces_a_final_answer_the_model_writes() -> None:
    answer = f"Order {ORDER} is pending."
    replies = [_call("query_order", order_id=ORDER), _call("query_order", order_id=ORDER)]
    state, model = _run([*replies, _final(answer)])
    assert len(_offered(model, 1)) == 2  # the first repeat still had tools
    final_schema = _schema(model, 2)
    assert _offered(model, 2) == []
    assert final_schema["properties"]["action"]["anyOf"][0]["required"] == ["final_answer"]
    system = [str(model.calls[i].messages[0].content) for i in (1, 2)]
    assert system[1] == system[0]  # the same listing: the prefix is cached
    user = [str(model.calls[i].messages[1].content) for i in (1, 2)]
    assert FINAL_ONLY_NOTE not in user[0] and f"- {FINAL_ONLY_NOTE}" in user[1]
    assert state["status"] == "completed"
    assert state["answer"] == answer  # the model's words, not the loop's


def test_forced_final_answer_survives_an_unusable_reply() -> None:
    replies = [_call("query_order", order_id=ORDER)] * 2 + ["not json at all", _final("pending")]
    state, model = _run(replies)
    assert _offered(model, 2) == [] and _offered(model, 3) == []
    assert state["status"] == "completed" and state["answer"] == "pending"


def test_a_single_success_does_not_force_the_answer() -> None:
    replies = [_call("query_order", order_id=ORDER), _final("pending")]
    _, model = _run(replies)
    assert _offered(model, 1) != []


def test_a_used_tool_stays_offered_though_it_matches_badly() -> None:
    """A tool outside the best matches gets used when it was offered before the tool set
    changed (a call of a tool not offered at its step is refused, not run)."""
    settings = AgentSettings(small_model=True, offered_tools=1)
    state: Any = {"task": f"What is the status of order {ORDER}?", "tool_buffer": []}
    assert [t.name for t in profile.offered_tools(state, TOOLS, settings)] == ["query_order"]
    state["tool_buffer"] = [{"step": 1, "tool": "weather"}]
    assert "weather" in [t.name for t in profile.offered_tools(state, TOOLS, settings)]


def test_the_same_offer_gives_the_same_schema() -> None:
    """A server's prompt cache holds from step to step only if the same offer is sent the
    same schema."""
    replies = [_call("query_order", order_id=ORDER), _call("query_order", order_id=ORDER)]
    _, model = _run([*replies, _final("x")])  # the result holds no new id: the same offer
    first, second = (model.calls[i].kwargs["response_format"] for i in (0, 1))
    assert first == second


def test_profile_defaults_follow_the_model() -> None:
    assert AgentSettings().small_profile is True  # the embedded model
    assert AgentSettings(base_url="http://127.0.0.1:9/v1").small_profile is False
    forced = AgentSettings(base_url="http://127.0.0.1:9/v1", small_model=True)
    assert profile.tool_limit(forced) == profile.SMALL_MODEL_TOOLS
    model = ScriptedChatModel(responses=[_final("x")])
    graph = build_graph(
        AgentSettings(protocol="json_schema"), model=model, registry=ToolRegistry(TOOLS)
    )
    run_traced(graph, {"task": "t"})  # a model passed in is not the embedded one
    assert model.calls[0].kwargs["temperature"] == AgentSettings().temperature
    assert len(_offered(model, 0)) == len(TOOLS)


def test_the_loop_finds_the_profile_by_its_entry_point() -> None:
    assert profile_for(AgentSettings(small_model=True)) is profile.SMALL_PROFILE
    assert profile_for(AgentSettings(base_url="http://127.0.0.1:9/v1")) is NO_PROFILE


def test_the_profile_on_without_tether_local_is_one_line_naming_the_package(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(profile_module, "entry_points", lambda **_: ())
    small_profile.cache_clear()
    try:
        with pytest.raises(MissingExtraError) as raised:
            _run([_final("x")])
    finally:
        small_profile.cache_clear()
    message = str(raised.value)
    assert len(message.splitlines()) == 1 and "tether-local" in message
    assert message.endswith("pip install 'tether[local]'")
    state, _ = _run([_final("x")], small_model=False)  # off, nothing is looked up
    assert state["status"] == "completed"


def test_a_reply_cut_at_max_tokens_runs_nothing() -> None:
    cut = AIMessage(
        '{"action": {"tool": "send_note", "arguments": {"text": "refund appro',
        response_metadata={"finish_reason": "length"},
    )
    state, _ = _run([cut, _final("x")])
    assert state["history"][0]["kind"] == "parse_failure"
    assert state["tool_buffer"] == []  # json-repair could have run it with cut arguments


def test_selection_keeps_named_and_callable_tools_and_registered_order() -> None:
    chosen = select_tools(TOOLS, "send_note about the weather", 1)
    assert {t.name for t in chosen} == {"send_note", "weather"}
    assert [t.name for t in chosen] == [t.name for t in TOOLS if t in chosen]  # registered order
    assert callable_from(query_order, {ORDER}) and not callable_from(query_order, {"ORD-1"})
    assert not callable_from(send_note, {"anything"})  # no id argument to fill
    by_id = select_tools(TOOLS, f"weather for {ORDER}", 1)
    assert {t.name for t in by_id} == {"query_order", "weather"}
    assert select_tools(TOOLS, "anything", None) == TOOLS


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"^ORD-\d{4}-\d{3,}$", "^ORD-[0-9]{4}-[0-9]{3,}$"),
        (r"^[\d-]+$", "^[0-9-]+$"),
        (r"^a\.b\\d$", r"^a\.b\\d$"),  # an escaped backslash then 'd' is not a digit class
    ],
)
def test_patterns_are_written_for_grammar_engines(pattern: str, expected: str) -> None:
    assert grammar_pattern(pattern) == expected
    for sample in ("ORD-2024-001", "12-3", "a.b\\d", "ORD-20x4-001"):
        assert bool(re.fullmatch(grammar_pattern(pattern), sample)) == bool(
            re.fullmatch(pattern, sample)
        )


def test_format_instructions_have_no_placeholders() -> None:
    for text in (JSON_FORMAT, REACT_FORMAT):
        assert not re.search(r"[<>{}]|\[\w", text), text


def test_world_tool_descriptions_hold_no_callable_ids(tmp_path: Any) -> None:
    with World.temporary() as world:
        tools = world.registry().tools()
    schemas = [t.args_schema.model_json_schema() for t in tools]  # type: ignore[union-attr]
    text = json.dumps(schemas, ensure_ascii=False)
    patterns = {p for p in re.findall(r'"pattern": "\^([^"]+)\$"', text) if re.match("[A-Z]", p)}
    assert {"ORD-", "U", "P", "PAY-"} <= {re.sub("[^A-Z-].*", "", p) for p in patterns}
    descriptions = " ".join(re.findall(r'"description": "([^"]*)"', text))
    for pattern in patterns:
        found = re.search(pattern.encode().decode("unicode_escape"), descriptions)
        assert found is None, (pattern, found)


def test_the_offer_is_matched_on_the_task_and_stays_put_as_results_arrive() -> None:
    replies = [_call("query_order", order_id=ORDER), _final("pending")]
    _, model = _run(replies)
    assert model.calls[1].messages[0].content == model.calls[0].messages[0].content
    listing = str(model.calls[0].messages[0].content)
    names = re.findall(r"^- (\w+)\(", listing, re.MULTILINE)
    assert names == ["convert_currency", "query_order"]  # best match for the task last
    assert "- query_order(order_id): " in listing and '"properties"' not in listing  # plain


def test_brief_listing_takes_the_first_sentence() -> None:
    assert first_sentence("Look it up. Then pay.") == "Look it up."
    assert first_sentence("查询订单。再付款。") == "查询订单。"
    assert first_sentence("no stop at all") == "no stop at all"


def test_notes_name_no_content_a_model_could_copy_as_its_answer() -> None:
    copyable = re.compile(r"your (final )?answer|own words|values you found|for the user", re.I)
    for text in (JSON_FORMAT, FINAL_ONLY_NOTE):
        assert not copyable.search(text), text


def test_open_repeats_are_bounded_only_when_asked() -> None:
    pattern = r"^U\d{4,}$"
    assert grammar_pattern(pattern) == "^U[0-9]{4,}$"
    bounded = grammar_pattern(pattern, bounded=True)
    assert re.fullmatch(bounded, "U0001") and re.fullmatch(bounded, "U" + "1" * (4 + REPEAT_SLACK))
    assert not re.fullmatch(bounded, "U" + "1" * (5 + REPEAT_SLACK))
    assert grammar_pattern(r"^a\{3,}$", bounded=True) == r"^a\{3,}$"  # a literal brace


@pytest.mark.parametrize(
    ("cores", "idle", "threads"),
    [(1, 1.0, 1), (2, 1.9, 2), (2, 1.2, 1), (2, 0.0, 1), (4, 2.6, 3), (64, 64.0, 8)],
)
def test_llama_cpp_takes_the_cores_other_work_leaves_idle(
    monkeypatch: pytest.MonkeyPatch, cores: int, idle: float | None, threads: int
) -> None:
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: set(range(cores)), raising=False)
    monkeypatch.setattr("tether_local.server.idle_cores", lambda: idle)
    assert default_threads() == threads


def test_idle_cores_reads_the_machine() -> None:
    idle = idle_cores(0.05)
    assert 0.0 <= idle <= (os.cpu_count() or 1)


PAYMENT = "PAY-00000000000000AB"


@tool
def find_payment(order_id: OrderId) -> dict[str, str]:
    """Find the payment of an order."""
    return {"order_id": order_id, "payment_id": PAYMENT}


@tool
def broken_lookup(order_id: OrderId) -> str:
    """Find an order's other payment."""
    raise ValueError("no payment PAY-FFFFFFFFFFFFFFFF for order ORD-2024-999")


@tool
def payment_status(payment_id: PaymentId) -> str:
    """Tell whether a payment went through."""
    return "settled"


@tool(side_effects=True)
def refund(order_id: OrderId, payment_id: PaymentId) -> str:
    """Refund the payment of an order."""
    return "refunded"


def test_id_arguments_take_only_ids_the_task_or_a_successful_result_holds() -> None:
    task = f"Refund the payment of order {ORDER}; ORD-2024-002 is another order."
    replies = [
        _call("broken_lookup", order_id=ORDER),
        _call("find_payment", order_id=ORDER),
        _final("found"),
    ]
    tools = [find_payment, broken_lookup, payment_status]
    _, model = _run(replies, task=task, tools=tools, offered_tools=None)
    first = _arguments(model, 0, "find_payment")["properties"]["order_id"]
    assert first["enum"] == [ORDER, "ORD-2024-002"] and "pattern" not in first
    # an error message is not a source of ids, and the tool that just failed is rested
    assert _offered(model, 1) == ["find_payment"]
    after_result = _arguments(model, 2, "payment_status")["properties"]
    assert after_result["payment_id"]["enum"] == [PAYMENT]


def test_writes_are_listed_but_not_callable_until_a_read_succeeds() -> None:
    task = f"Refund the payment of order {ORDER}."
    replies = [_call("find_payment", order_id=ORDER), _final("found")]
    tools = [find_payment, refund]
    _, model, trace = _run_traced(replies, task, tools, offered_tools=None, approval_tools=[])
    assert _offered(model, 0) == ["find_payment"]
    assert set(_offered(model, 1)) == {"find_payment", "refund"}
    calls = [e["detail"] for e in trace if e["event"] == "model_call"]
    assert calls[0]["withheld"] == {"refund": WITHHELD_WHY["write"]}  # the story says why
    assert calls[1]["withheld"] == {}
    system = [str(model.calls[i].messages[0].content) for i in (0, 1)]
    assert "refund(" in system[0] and system[0] == system[1]  # listed throughout: cache holds


def test_a_write_only_offer_is_not_withheld() -> None:
    _, model = _run([_final("no")], task=f"Refund order {ORDER}.", tools=[refund])
    assert _offered(model, 0) == ["refund"]


def test_a_write_the_operator_rejected_is_withheld_afterwards() -> None:
    read = {"step": 1, "tool": "find_payment", "arguments": {}, "tokens": 1}
    state: Any = {
        "tool_buffer": [read | {"result": {"status": "success", "data": {}, "meta": {}}}],
        "history": [
            {"step": 2, "kind": "rejected", "summary": "no", "fingerprint": 'refund{"a":1}'}
        ],
    }
    assert rejected_writes(state, [find_payment, refund]) == {"refund"}
    state["history"] = []
    assert rejected_writes(state, [find_payment, refund]) == set()


def test_the_tool_that_just_failed_is_rested_for_one_step_only() -> None:
    failed = {"step": 1, "kind": "tool_error", "summary": "x", "fingerprint": 'weather{"a":1}'}
    later = {"step": 2, "kind": "success", "summary": "y", "fingerprint": 'send_note{"t":1}'}
    unread = {"step": 2, "kind": "parse_failure", "summary": "z", "fingerprint": None}
    settings = AgentSettings(small_model=True)
    state: Any = {"history": [failed]}
    assert withheld(state, TOOLS, settings, ()) == {  # and query_order: no order id
        "weather": WITHHELD_WHY["failed"],
        "query_order": WITHHELD_WHY["ungrounded"],
    }
    state["history"] = [failed, unread]  # an unreadable reply does not end the rest
    assert "weather" in withheld(state, TOOLS, settings, ())
    state["history"] = [failed, later]
    assert "weather" not in withheld(state, TOOLS, settings, ())
    off = AgentSettings(small_model=False)  # the loop asks no profile: no tool is withheld
    assert step_offer(state, TOOLS, off).withheld == ()


@tool
def long_report(order_id: OrderId) -> str:
    """Write a long report on an order."""
    return f"{order_id} " + "detail " * 500


def test_a_long_result_is_shown_cut_under_the_profile_and_whole_without() -> None:
    replies = [_call("long_report", order_id=ORDER), _final("done")]
    for small, cut in ((True, True), (False, False)):
        state, model = _run(replies, tools=[long_report], small_model=small, result_chars=None)
        user = str(model.calls[1].messages[1].content)
        assert ("characters: results are shown short for a small model]" in user) is cut
        if cut:
            shown = profile.SMALL_MODEL_RESULT_CHARS
            assert 0 < user.count("detail") <= shown // len("detail ")
        else:
            assert user.count("detail") == 500
        assert "detail " * 500 in json.dumps(state["tool_buffer"][-1]["result"])  # kept whole


@tool
def discount(subtotal: float, coupon: str | None = None) -> str:
    """Work out a discount on a subtotal."""
    return f"{subtotal * 0.9:.2f}"


@pytest.mark.parametrize(
    ("tool_name", "first", "again"),
    [
        ("discount", {"subtotal": 10}, {"subtotal": 10.0, "coupon": None}),  # a default spelled out
        ("query_order", {"order_id": ORDER}, {"order_id": ORDER.lower()}),  # an id's case
    ],
)
def test_calls_the_tool_receives_alike_are_one_call(
    tool_name: str, first: dict[str, Any], again: dict[str, Any]
) -> None:
    answer = "pending at 9.00"  # states what either call found
    replies = [_call(tool_name, **first), _call(tool_name, **again), _final(answer)]
    task = f"The discount on 10 for {ORDER}?"  # an amount: the discount's subtotal is held
    state, model = _run(replies, task, tools=[discount, query_order], offered_tools=None)
    assert _offered(model, 2) == []  # the second was a repeat of a call that had succeeded
    assert state["answer"] == answer


def test_only_listed_tools_are_told_as_withheld() -> None:
    failed = {"step": 1, "kind": "tool_error", "summary": "x", "fingerprint": 'unlisted{"a":1}'}
    state: Any = {"history": [failed], "task": f"status of {ORDER}"}
    grounded = (("^ORD-[0-9]{4}-[0-9]{3,}$", (ORDER,)),)
    assert withheld(state, TOOLS, AgentSettings(small_model=True), grounded) == {}


@pytest.mark.parametrize(
    ("task", "tools", "replies", "why"),
    [
        (  # a write before any read has succeeded
            f"Refund the payment of order {ORDER}.",
            [find_payment, refund],
            [_call("refund", order_id=ORDER, payment_id=PAYMENT)],
            "not callable at this step",
        ),
        (  # an id that is in neither the task nor a successful result
            f"Find the payment of order {ORDER}.",
            [find_payment, payment_status],
            [_call("find_payment", order_id="ORD-2024-999")],
            "'ORD-2024-999'",
        ),
        (  # a tool whose required id the context lacks
            f"Find the payment of order {ORDER}.",
            [find_payment, payment_status],
            [_call("payment_status", payment_id=PAYMENT)],
            WITHHELD_WHY["ungrounded"],
        ),
        (  # the tool whose call failed at the last step, proposed again at once
            f"Find the other payment of order {ORDER}.",
            [broken_lookup, find_payment],
            [_call("broken_lookup", order_id=ORDER), _call("broken_lookup", order_id=ORDER)],
            WITHHELD_WHY["failed"],
        ),
        (  # any call once only the final answer is offered
            f"What is the status of order {ORDER}?",
            [query_order, send_note],
            [_call("query_order", order_id=ORDER)] * 2 + [_call("send_note", text="hi")],
            "only a final answer",
        ),
        (  # a registered tool the step does not list at all
            f"What is the status of order {ORDER}?",
            TOOLS,
            [_call("weather", city="Paris")],
            "not offered at this step",
        ),
    ],
)
def test_a_server_that_ignores_the_schema_meets_the_same_limits_in_the_gate(
    task: str, tools: list[Any], replies: list[str], why: str
) -> None:
    """The profile's limits were only in the schema sent to the server: a server that ignored
    it had every such call run (approval off). The gate now refuses them, saying why."""
    state, model = _run([*replies, _final("stop")], task=task, tools=tools, approval_tools=[])
    refused = len(replies)  # the last scripted call is the one the limits forbid
    assert state["history"][refused - 1]["kind"] == "refused", state["history"]
    assert state["tool_buffer"][-1]["result"]["meta"]["error_type"] == "refused"
    assert why in "\n".join(str(m.content) for m in model.calls[refused].messages)
    if "offered" in why:
        assert "weather" not in _offered(model, 0)  # the schema did not list it either
