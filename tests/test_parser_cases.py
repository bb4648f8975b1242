"""tether's ReAct reading of the parser comparison corpus (``tests/parser_cases.py``), held
against each peer's: where a peer reads a reply one way, tether reads it the same way, or
the difference is listed with its reason (``STRICTER``, ``LENIENT``, ``DIFFERENT``)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import json_repair
import pytest
from langchain_classic.agents.output_parsers import ReActSingleInputOutputParser
from langchain_core.agents import AgentFinish
from langchain_core.exceptions import OutputParserException
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import ConfigDict, create_model
from tether.llm.parsing import parse_react

from tests.parser_cases import (
    CASES,
    COUNTS,
    DIFFERENT,
    LENIENT,
    STRICTER,
    TOOLS,
    Action,
    Case,
    Final,
    Reading,
)


def _tool(name: str, required: tuple[str, ...]) -> BaseTool:
    fields: dict[str, Any] = {field: (str, ...) for field in required}
    schema = create_model(f"{name}_arguments", __config__=ConfigDict(extra="allow"), **fields)
    return StructuredTool.from_function(
        func=lambda **_: "", name=name, description=f"The {name} tool.", args_schema=schema
    )


OFFERED = [_tool(name, required) for name, required in TOOLS.items()]


def tether_reads(reply: str, *, repair: bool = True) -> Reading:
    proposal = parse_react(reply, repair_for=OFFERED if repair else ())
    if proposal["kind"] == "action":
        return Action(proposal["tool"], proposal["arguments"])
    if proposal["kind"] == "final":
        return Final(proposal["answer"])
    return None


def outcome(peer: Reading, ours: Reading) -> str:
    if peer == ours:
        return "agree"
    if ours is None:
        return "stricter"
    return "lenient" if peer is None else "different"


def documented(case: Case) -> str:
    for listed, name in ((STRICTER, "stricter"), (LENIENT, "lenient"), (DIFFERENT, "different")):
        if case.id in listed:
            return name
    return "agree"


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_tether_reads_what_the_peer_reads_or_the_difference_is_documented(case: Case) -> None:
    ours = tether_reads(case.reply)
    assert outcome(case.reads, ours) == documented(case), (case.reads, ours)


def test_each_documented_difference_names_a_case_once_with_a_reason() -> None:
    ids = [case.id for case in CASES]
    assert len(ids) == len(set(ids))
    listed = [*STRICTER, *LENIENT, *DIFFERENT]
    assert len(listed) == len(set(listed)) and set(listed) <= set(ids)
    reasons = [*STRICTER.values(), *LENIENT.values(), *DIFFERENT.values()]
    assert all(reason.strip() and "\n" not in reason for reason in reasons)


def test_the_counts_per_peer_are_as_documented() -> None:
    counts: dict[str, Counter[str]] = {}
    for case in CASES:
        counts.setdefault(case.peer, Counter())[documented(case)] += 1
    assert {peer: dict(found) for peer, found in counts.items()} == COUNTS


# --- the recorded readings are what the installed peers do ------------------------------------


def langchain_reads(reply: str) -> Reading:
    """ReActSingleInputOutputParser's result, its string input read as the module says."""
    try:
        parsed = ReActSingleInputOutputParser().parse(reply)
    except OutputParserException:
        return None
    if isinstance(parsed, AgentFinish):
        return Final(parsed.return_values["output"])
    text = str(parsed.tool_input)
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, dict):
        return Action(parsed.tool, value)
    required = TOOLS.get(parsed.tool, ())
    return Action(parsed.tool, {required[0]: text.strip()}) if len(required) == 1 else None


@pytest.mark.parametrize(
    "case", [case for case in CASES if case.peer == "langchain"], ids=lambda case: case.id
)
def test_langchain_reads_what_is_recorded(case: Case) -> None:
    assert langchain_reads(case.reply) == case.reads


@pytest.mark.parametrize(
    "case", [case for case in CASES if case.peer == "json_repair"], ids=lambda case: case.id
)
def test_json_repair_reads_what_is_recorded(case: Case) -> None:
    text = case.reply.removeprefix("Action: record\nAction Input: ")
    value = json_repair.loads(text)
    assert (Action("record", value) if isinstance(value, dict) else None) == case.reads
