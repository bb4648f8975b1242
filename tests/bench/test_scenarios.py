"""The scenario format: the repository's file, the published schema, and loader errors."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from tether_bench.scenarios import (
    SCHEMA_PATH,
    Scenario,
    ScenarioFileError,
    load_scenarios,
    parse_scenarios,
    render_schema,
)

GOOD: dict[str, Any] = {
    "id": "ok-1",
    "category": "db",
    "language": "en",
    "task": "What is the status of order ORD-2024-002?",
    "gold_actions": [{"tool": "query_order", "arguments": {"order_id": "ORD-2024-002"}}],
    "gold_answer": "It is delivered.",
    "required_outputs": [{"text": "delivered"}],
}


def lines(*records: Any) -> list[str]:
    return [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in records]


def test_the_repository_has_the_seed_mix_and_more(scenarios: list[Scenario]) -> None:
    counts = Counter(s.category for s in scenarios)
    assert len(scenarios) >= 120
    assert counts["db"] >= 40 and counts["api"] >= 40 and counts["calc"] >= 40
    assert counts["fault"] and counts["irrelevant"] and counts["impossible"]
    assert {s.language for s in scenarios} == {"zh", "en"}
    chains = [s for s in scenarios if len(s.gold_actions) >= 3]
    assert len(chains) >= 40
    assert any(s.initial_state for s in scenarios)
    assert all(s.fault_plan for s in scenarios if s.category == "fault")
    impossible = [s for s in scenarios if s.category == "impossible"]
    assert all(s.expected_termination == "stopped_early" for s in impossible)


def test_published_schema_matches_the_model() -> None:
    assert SCHEMA_PATH.read_text(encoding="utf-8") == render_schema()
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert set(schema["required"]) >= {"id", "category", "language", "task", "gold_answer"}
    assert schema["properties"]["category"]["enum"] == [
        "db",
        "api",
        "calc",
        "multi",
        "fault",
        "irrelevant",
        "impossible",
        "reread",
        "refusal",
        "policy",
        "clarify",
        "multiturn",
    ]
    assert schema["$defs"]["UserTurn"]["required"] == ["message", "plan_end"]


def test_a_good_line_loads() -> None:
    [scenario] = parse_scenarios(lines(GOOD))
    assert scenario.gold_actions[0].tool == "query_order"


@pytest.mark.parametrize(
    ("bad", "fragments"),
    [
        ("{not json", ["invalid JSON"]),
        ("[1, 2]", ["must be a JSON object"]),
        ({k: v for k, v in GOOD.items() if k != "task"}, ["field 'task'", "Field required"]),
        ({**GOOD, "category": "weather"}, ["field 'category'"]),
        ({**GOOD, "gold_actions": [{"arguments": {}}]}, ["field 'gold_actions.0.tool'"]),
        ({**GOOD, "surprise": 1}, ["field 'surprise'", "Extra inputs"]),
        ({**GOOD, "required_outputs": [{"number": "12.x"}]}, ["field 'required_outputs.0"]),
        ({**GOOD, "gold_answer": "no idea"}, ["gold_answer lacks", "'delivered'"]),
        ({**GOOD, "expected_termination": "stopped_early"}, ["needs max_model_calls"]),
        ({**GOOD, "fault_plan": [{"target": "pay_order", "calls": [-1]}]}, ["fault_plan.0.calls"]),
    ],
)
def test_a_bad_line_is_rejected_with_its_line_number_and_field(
    bad: Any, fragments: list[str]
) -> None:
    with pytest.raises(ScenarioFileError) as caught:
        parse_scenarios(lines(GOOD, "", bad), "bench.jsonl")
    message = str(caught.value)
    assert message.startswith("bench.jsonl:3: "), message
    assert caught.value.line == 3
    for fragment in fragments:
        assert fragment in message


def test_duplicate_ids_name_both_lines() -> None:
    with pytest.raises(ScenarioFileError, match=r"x:2: field 'id': duplicate 'ok-1' .*line 1"):
        parse_scenarios(lines(GOOD, GOOD), "x")


def test_missing_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(ScenarioFileError, match="cannot read"):
        load_scenarios(tmp_path / "nope.jsonl")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n// only a comment\n", encoding="utf-8")
    with pytest.raises(ScenarioFileError, match="no scenarios"):
        load_scenarios(empty)
