"""json_safe and cap_result: anything becomes checkpoint-safe data, with visible markers."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from typing import Any

import ormsgpack
import pytest
import sqlalchemy as sa
from hypothesis import given, settings
from hypothesis import strategies as st
from tether.tools import cap_result, json_safe
from tether.tools.envelope import error_envelope, success_envelope


def checkpoint_safe(value: Any) -> None:
    """What a checkpoint and a prompt need: strict JSON and msgpack round trips."""
    assert json.loads(json.dumps(value, allow_nan=False)) == value
    assert ormsgpack.unpackb(ormsgpack.packb(value)) == value


def test_plain_json_is_unchanged() -> None:
    value = {"a": [1, 2.5, "x", None, True], "b": {"c": -(2**63)}}
    assert json_safe(value) == value


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (2**64, "<int: 65 bits, wider than 64>"),
        (float("nan"), "<float: nan>"),
        (float("-inf"), "<float: -inf>"),
        (Decimal("2328.02"), "2328.02"),
        (Decimal("NaN"), "<decimal: NaN>"),
        (dt.datetime(2024, 5, 1, 12, 30), "2024-05-01T12:30:00"),
        (b"\x00\x01\x02", "<bytes: 3 bytes, base64 AAEC>"),
        ({3, 1, 2}, [1, 2, 3]),
        ((1, "a"), [1, "a"]),
        ("lone \ud800 surrogate", "lone \\ud800 surrogate"),
        ({1: "a", None: "b", (1, 2): "c"}, {"1": "a", "None": "b", "<tuple key>": "c"}),
    ],
)
def test_conversions(value: Any, expected: Any) -> None:
    assert json_safe(value) == expected


def test_a_sqlalchemy_row_becomes_a_dict() -> None:
    engine = sa.create_engine("sqlite://")
    with engine.connect() as conn:
        row = conn.execute(sa.text("SELECT 1 AS id, 'x' AS name")).one()
    assert json_safe(row) == {"id": 1, "name": "x"}
    assert json_safe([row]) == [{"id": 1, "name": "x"}]


def test_cycles_and_depth_are_cut_with_markers() -> None:
    loop: dict[str, Any] = {"name": "a"}
    loop["self"] = loop
    assert json_safe(loop) == {"name": "a", "self": "<cycle>"}
    shared = [1]
    assert json_safe([shared, shared]) == [[1], [1]]  # repeated, not cyclic
    deep: Any = 0
    for _ in range(100_000):
        deep = {"": deep}
    cut = json_safe(deep, max_depth=5)
    assert json.dumps(cut) == '{"": {"": {"": {"": {"": "<truncated: nesting deeper than 5>"}}}}}'


def test_long_containers_are_cut_with_a_marker() -> None:
    assert json_safe(list(range(5)), max_items=3) == [0, 1, 2, "<truncated: 2 more items>"]
    assert json_safe({"a": 1, "b": 2}, max_items=1) == {"a": 1, "<truncated>": "1 more keys"}


def test_hostile_objects_never_raise() -> None:
    class Opaque:
        def __repr__(self) -> str:
            raise RuntimeError("no")

    class BadMapping(dict[str, int]):
        def items(self) -> Any:
            raise RuntimeError("no")

    assert json_safe(Opaque()) == "<Opaque object: unprintable>"
    assert json_safe(BadMapping(a=1)) == "<BadMapping: unreadable (RuntimeError)>"
    assert json_safe(object()).startswith("<object object: <object object at")


values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text()
    | st.binary(max_size=64)
    | st.decimals()
    | st.datetimes(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=4) | st.integers(), inner, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None)
@given(values)
def test_any_value_becomes_checkpoint_safe(value: Any) -> None:
    checkpoint_safe(json_safe(value))


def test_cap_result_cuts_data_and_says_how_much() -> None:
    small = success_envelope({"a": 1})
    assert cap_result(small, 100) is small
    big = success_envelope({"rows": list(range(10_000))})
    total = len(json.dumps(big["data"]))
    capped = cap_result(big, 500)
    assert capped["data"].startswith('{"rows": [0, 1, 2')
    assert capped["data"].endswith(
        f"…[cut {total - 500} of {total} characters: over the max_tool_result_chars cap]"
    )
    assert capped["meta"]["truncated"] == {"chars": total, "kept": 500}
    assert big["data"] == {"rows": list(range(10_000))}  # the input is not changed
    checkpoint_safe(capped)


def test_cap_result_cuts_error_messages() -> None:
    capped = cap_result(error_envelope("e" * 300), 100)
    assert capped["message"].endswith(
        "…[cut 200 of 300 characters: over the max_tool_result_chars cap]"
    )
    assert capped["meta"]["error_type"] == "tool_error"
