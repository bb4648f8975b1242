"""A value an agent wrote inside JSON is read as the value: a quote, a backslash or a
Chinese letter is escaped in a call's arguments, and the simulator compares the call with the
value as that JSON writes it (before, a done call with such a value read as not made)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tether_bench.scenarios import Scenario, ToolAction
from tether_bench.simulator.facts import visible
from tether_bench.simulator.policy import progress
from tether_bench.simulator.reading import holds, read_request
from tether_bench.simulator.relapse import last_result
from tether_bench.simulator.sessions import Turn

VALUES = ["解放路18号3栋502室", 'Room "B" 12', "C:\\dock\\7", "Müllerstraße 5"]


def body(tool: str, arguments: dict[str, Any], *, ascii_only: bool) -> dict[str, Any]:
    """A native tool-calling request: the call's arguments as a JSON string, then its result."""
    result = {"status": "success", "data": {"updated": True}}
    call = {"id": "c1", "type": "function"}
    call["function"] = {"name": tool, "arguments": json.dumps(arguments, ensure_ascii=ascii_only)}
    return {
        "messages": [
            {"role": "user", "content": "Change the address."},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": json.dumps(result)},
        ],
        "tools": [{"type": "function", "function": {"name": tool, "parameters": {}}}],
    }


@pytest.mark.parametrize("ascii_only", [False, True])
@pytest.mark.parametrize("value", VALUES)
def test_a_call_with_an_escaped_value_counts_as_made(value: str, ascii_only: bool) -> None:
    arguments = {"order_id": "ORD-2024-001", "address_line": value}
    view = read_request(body("update_shipping_address", arguments, ascii_only=ascii_only))
    written = json.dumps(value, ensure_ascii=ascii_only)[1:-1]
    assert written in view.text  # the prompt shows the value as JSON writes it
    step = ToolAction(tool="update_shipping_address", arguments=arguments)
    assert progress([step], view) == 1
    turn = Turn("action", "", "update_shipping_address", arguments)
    assert last_result(view.observations, turn) is not None
    assert visible(value, view)


def test_a_value_is_held_only_where_it_is_written(by_id: dict[str, Scenario]) -> None:
    for value in VALUES:
        assert holds(json.dumps({"v": json.dumps({"v": value})}), value)  # JSON inside JSON
        assert not holds(json.dumps({"v": value + "X"})[:-3], value + "X")
        assert not holds(json.dumps({"v": "other"}), value)
    scenario = by_id["db-readdress-01"]
    step = next(s for s in scenario.gold_actions if s.tool == "update_shipping_address")
    view = read_request(body(step.tool, dict(step.arguments), ascii_only=True))
    assert progress([step], view) == 1
