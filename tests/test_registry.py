"""ToolRegistry: validation, envelopes, stats, and no exception ever escaping."""

from __future__ import annotations

import threading
from typing import Annotated, Any

import httpx
import pytest
from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field

from tether import ToolRegistry, TransientToolError, success, tool


class OrderQueryInput(BaseModel):
    order_id: str = Field(description="订单ID，格式如ORD-2024-001 / order id like ORD-2024-001")


class OrderQueryTool(BaseTool):
    name: str = "query_order"
    description: str = "Look up an order by id."
    args_schema: type[BaseModel] = OrderQueryInput

    def _run(self, order_id: str) -> dict[str, str]:
        if not order_id.startswith("ORD-"):
            raise ValueError(f"invalid order id: {order_id}")
        return {"order_id": order_id, "status": "pending"}


def ticking_clock() -> Any:
    now = [0.0]

    def clock() -> float:
        now[0] += 0.25
        return now[0]

    return clock


def test_basetool_subclass_success_is_wrapped() -> None:
    registry = ToolRegistry([OrderQueryTool()])
    result = registry.invoke("query_order", {"order_id": "ORD-2024-001"})
    assert result["status"] == "success"
    assert result["data"] == {"order_id": "ORD-2024-001", "status": "pending"}


def test_missing_field_names_it_and_its_description() -> None:
    registry = ToolRegistry([OrderQueryTool()])
    result = registry.invoke("query_order", {})
    assert result["status"] == "error"
    assert result["meta"]["error_type"] == "validation_error"
    assert "missing required field 'order_id'" in result["message"]
    assert "ORD-2024-001" in result["message"]  # the description tells the model the format


def test_wrong_type_names_the_field_and_value() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Adds."""
        return a + b

    result = ToolRegistry([add]).invoke("add", {"a": "three", "b": 1})
    assert "field 'a'" in result["message"] and "'three'" in result["message"]


def test_non_object_arguments_are_an_error_not_a_crash() -> None:
    result = ToolRegistry([OrderQueryTool()]).invoke("query_order", ["ORD-1"])  # type: ignore[arg-type]
    assert result["meta"]["error_type"] == "validation_error"
    assert "JSON object" in result["message"]


def test_tool_exception_becomes_an_error_envelope() -> None:
    result = ToolRegistry([OrderQueryTool()]).invoke("query_order", {"order_id": "X"})
    assert result["status"] == "error"
    assert result["meta"]["error_type"] == "tool_error"
    assert result["meta"]["transient"] is False
    assert "invalid order id: X" in result["message"]


@pytest.mark.parametrize(
    "exc",
    [
        TransientToolError("busy"),
        TimeoutError("slow"),
        ConnectionError("reset"),
        httpx.ConnectTimeout("connect timeout"),
        httpx.HTTPStatusError(
            "503",
            request=httpx.Request("GET", "http://127.0.0.1"),
            response=httpx.Response(503),
        ),
        httpx.HTTPStatusError(
            "429",
            request=httpx.Request("GET", "http://127.0.0.1"),
            response=httpx.Response(429),
        ),
    ],
)
def test_transient_failures_are_marked(exc: Exception) -> None:
    @tool
    def flaky(key: str) -> str:
        """Fails."""
        raise exc

    result = ToolRegistry([flaky]).invoke("flaky", {"key": "a"})
    assert result["meta"]["transient"] is True
    assert result["meta"]["error_type"] == "transient"


def test_http_404_is_not_transient() -> None:
    @tool
    def missing(key: str) -> str:
        """404s."""
        raise httpx.HTTPStatusError(
            "404", request=httpx.Request("GET", "http://127.0.0.1"), response=httpx.Response(404)
        )

    assert ToolRegistry([missing]).invoke("missing", {"key": "a"})["meta"]["transient"] is False


def test_unknown_tool_lists_available_tools() -> None:
    result = ToolRegistry([OrderQueryTool()]).invoke("query_orders", {})
    assert result["meta"]["error_type"] == "unknown_tool"
    assert "Available tools: query_order" in result["message"]


def test_stats_track_successes_failures_and_latency() -> None:
    registry = ToolRegistry([OrderQueryTool()], clock=ticking_clock())
    registry.invoke("query_order", {"order_id": "ORD-1"})
    registry.invoke("query_order", {"order_id": "bad"})
    registry.invoke("query_order", {})
    stats = registry.stats("query_order")
    assert stats.usage_count == 3
    assert stats.success_count == 1
    assert stats.failure_count == 2
    assert stats.consecutive_failures == 2
    assert stats.last_error is not None and "missing required field" in stats.last_error
    assert stats.last_latency_s == pytest.approx(0.25)
    assert stats.total_latency_s == pytest.approx(0.75)
    registry.invoke("query_order", {"order_id": "ORD-2"})
    assert registry.stats("query_order").consecutive_failures == 0


def test_tool_metadata_is_kept() -> None:
    @tool
    def scored(key: str) -> Any:
        """Scores."""
        return success({"key": key}, confidence_score=0.42, retry_count=1)

    result = ToolRegistry([scored]).invoke("scored", {"key": "a"})
    assert result["data"] == {"key": "a"}
    assert result["meta"]["confidence_score"] == 0.42


def test_register_and_unregister() -> None:
    registry = ToolRegistry()
    registry.register(OrderQueryTool())
    assert registry.names() == ["query_order"]
    with pytest.raises(ValueError, match="already registered"):
        registry.register(OrderQueryTool())
    registry.unregister("query_order")
    assert "query_order" not in registry
    with pytest.raises(KeyError, match="no tool named"):
        registry.unregister("query_order")
    with pytest.raises(KeyError, match="no stats"):
        registry.stats("never_there")


def test_tool_without_schema_is_refused() -> None:
    class Loose(BaseTool):
        name: str = "loose"
        description: str = "no schema"

        def _run(self, **kwargs: Any) -> str:
            return "x"

    with pytest.raises(TypeError, match="args_schema"):
        ToolRegistry([Loose()])


def test_decorator_needs_a_description() -> None:
    def undocumented(a: int) -> int:
        return a

    with pytest.raises(ValueError, match="docstring"):
        tool(undocumented)


def test_annotated_descriptions_reach_the_schema() -> None:
    @tool
    def find(email: Annotated[str, Field(description="the user's e-mail")]) -> str:
        """Find a user."""
        return email

    schema = find.args_schema.model_json_schema()  # type: ignore[union-attr]
    assert schema["properties"]["email"]["description"] == "the user's e-mail"


def test_concurrent_calls_keep_exact_counts() -> None:
    registry = ToolRegistry([OrderQueryTool()])

    def worker() -> None:
        for _ in range(25):
            registry.invoke("query_order", {"order_id": "ORD-1"})

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert registry.stats("query_order").usage_count == 100
