"""What each output protocol sends a vLLM-shaped server, pinned on the captured request bodies:
resolvable ``$ref``s in the json_schema action, ``parallel_tool_calls=false`` for native tool
calling, and a budget check that counts the tool schemas the chat template adds."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

import pytest
from pydantic import BaseModel, Field, create_model
from referencing import Registry
from referencing.jsonschema import DRAFT202012
from tether import AgentSettings, ToolRegistry, build_graph, tool
from tether.testing import run_traced

from tests.contract.vllm_stub import RunningStub, StubConfig, serve_stub


class Speed(StrEnum):
    standard = "standard"
    express = "express"


class Address(BaseModel):
    city: str = Field(description="City")
    postcode: str = Field(pattern=r"^\d{6}$", description="Six digits")


@tool
def ship(order_id: str, speed: Speed, to: Address) -> str:
    """Ship an order to an address at a speed."""
    return f"{order_id} ships {speed.value} to {to.city}"


OtherAddress = create_model("Address", label=(int, ...))  # ship's def name, another shape


@tool
def tag(address: OtherAddress) -> str:  # type: ignore[valid-type]
    """Tag something."""
    return str(address.label)  # type: ignore[attr-defined]


@tool
def query_order(order_id: str) -> str:
    """Look an order up."""
    return f"{order_id}: pending"


def _run(base_url: str, tools: list[Any], **settings: Any) -> dict[str, Any]:
    graph = build_graph(
        AgentSettings(base_url=base_url, model="Qwen2.5-7B-Instruct", **settings),
        registry=ToolRegistry(tools),
    )
    state, trace = run_traced(graph, {"task": "ship ORD-2024-001 express to 上海 200031"})
    return {**state, "trace": trace}


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [r for value in node.values() for r in _refs(value)]
    if isinstance(node, list):
        return [r for item in node for r in _refs(item)]
    return []


def draft_2020_12() -> Any:
    """jsonschema's Draft202012Validator, imported here rather than at collection: its format
    checkers build their grammars at import (over a second in every pytest worker)."""
    from jsonschema import Draft202012Validator

    return Draft202012Validator


def _keys(node: Any) -> set[str]:
    if isinstance(node, dict):
        return set(node) | {k for value in node.values() for k in _keys(value)}
    if isinstance(node, list):
        return {k for item in node for k in _keys(item)}
    return set()


def test_json_schema_refs_resolve_from_the_root(stub: RunningStub) -> None:
    _run(stub.base_url, [ship, query_order], protocol="json_schema", max_steps=1)
    schema = stub.config.requests[0]["response_format"]["json_schema"]["schema"]
    Draft202012Validator = draft_2020_12()
    Draft202012Validator.check_schema(schema)
    refs = _refs(schema)
    assert refs, "the nested model and the Enum are referenced"
    resolver = Registry().with_resource("urn:s", DRAFT202012.create_resource(schema)).resolver()
    for ref in refs:
        assert resolver.lookup(f"urn:s{ref}").contents, ref  # raises if it does not resolve
    assert "$defs" not in _keys(schema["properties"]["action"])  # hoisted, not left per tool
    assert {"Speed", "Address"} <= set(schema["$defs"])
    call = {
        "thought": "ship it",
        "action": {
            "tool": "ship",
            "arguments": {
                "order_id": "ORD-2024-001",
                "speed": "express",
                "to": {"city": "上海", "postcode": "200031"},
            },
        },
    }
    validator = Draft202012Validator(schema)
    validator.validate(call)
    bad = {**call, "action": {**call["action"], "arguments": {**call["action"]["arguments"]}}}
    bad["action"]["arguments"]["speed"] = "teleport"
    assert not validator.is_valid(bad)  # the Enum is enforced through its $ref


def test_same_def_name_in_two_tools_is_renamed_not_merged(stub: RunningStub) -> None:
    _run(stub.base_url, [ship, tag], protocol="json_schema", max_steps=1)
    schema = stub.config.requests[0]["response_format"]["json_schema"]["schema"]
    tag_call = {"thought": "t", "action": {"tool": "tag", "arguments": {"address": {"label": 3}}}}
    ship_arguments = {
        "order_id": "O",
        "speed": "standard",
        "to": {"city": "c", "postcode": "200031"},
    }
    assert len([name for name in schema["$defs"] if name.endswith("Address")]) == 2
    validator = draft_2020_12()(schema)
    assert validator.is_valid(tag_call)
    assert validator.is_valid(
        {"thought": "t", "action": {"tool": "ship", "arguments": ship_arguments}}
    )


def test_patterns_sent_use_digit_classes_not_escapes(stub: RunningStub) -> None:
    _run(stub.base_url, [ship], protocol="json_schema", max_steps=1)
    sent = str(stub.config.requests[0]["response_format"])
    assert "[0-9]{6}" in sent and "\\\\d" not in sent


def test_native_asks_for_one_tool_call_per_reply(stub: RunningStub) -> None:
    state = _run(stub.base_url, [query_order], protocol="native", max_steps=1)
    body = stub.config.requests[0]
    assert body["parallel_tool_calls"] is False
    assert [t["function"]["name"] for t in body["tools"]] == ["query_order"]
    assert state["tool_buffer"][0]["tool"] == "query_order"


def test_native_budget_counts_the_tool_schemas_as_the_server_renders_them(
    stub: RunningStub,
) -> None:
    state = _run(stub.base_url, [ship, query_order], protocol="native", max_steps=1)
    chats = [b for b in stub.config.tokenize_bodies if "messages" in b]
    assert chats, "the chat shape of /tokenize was asked"
    assert {t["function"]["name"] for t in chats[0]["tools"]} == {"ship", "query_order"}
    rendered = next(e for e in state["trace"] if e["event"] == "model_call")["detail"]
    messages_only = state["usage"]["input_tokens"]  # the stub's usage leaves the tools out
    assert rendered["prompt_estimate"] > messages_only
    # A budget the messages alone fit in, but not with the tool schemas: nothing is spent.
    budget = rendered["prompt_estimate"] - 1
    assert budget >= messages_only
    with serve_stub(StubConfig()) as tight:
        stopped = _run(
            tight.base_url,
            [ship, query_order],
            protocol="native",
            token_budget=budget,
            cap_answer=False,  # else the last answer's call, which lists no tools, fits
        )
        assert stopped["status"] == "partial"
        assert "would be exceeded" in stopped["reason"]
        assert tight.config.requests == []  # stopped before the model was called


def test_native_budget_falls_back_to_counting_the_schemas_as_text(
    stub_without_tokenize: RunningStub,
) -> None:
    with_tools = _run(stub_without_tokenize.base_url, [ship, query_order], protocol="native")
    detail = next(e for e in with_tools["trace"] if e["event"] == "model_call")["detail"]
    with serve_stub(StubConfig(tokenize=False)) as bare:
        no_tools = _run(bare.base_url, [], protocol="native", max_steps=1)
    bare_detail = next(e for e in no_tools["trace"] if e["event"] == "model_call")["detail"]
    # The schemas' JSON (two tools with a nested model and an Enum) is far from free.
    assert detail["prompt_estimate"] > bare_detail["prompt_estimate"] + 50


@pytest.mark.parametrize("protocol", ["json_schema", "native", "react"])
def test_every_protocol_is_accepted_by_the_stub(stub: RunningStub, protocol: str) -> None:
    state = _run(stub.base_url, [ship, query_order], protocol=protocol, max_steps=1)
    assert state["status"] in ("max_steps", "completed")
