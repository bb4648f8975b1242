"""Settings: one typed place, overridable by environment and per run."""

from __future__ import annotations

from typing import Any

import pytest

from tests.scripts import act, final
from tether import AgentSettings, build_graph, tool
from tether.settings import resolve_settings
from tether.testing import ScriptedChatModel


def test_memory_budget_is_the_ratio_of_the_context_window() -> None:
    settings = AgentSettings(context_window=1000, memory_ratio=0.5)
    assert settings.memory_budget == 500


def test_context_window_follows_the_model_when_unset() -> None:
    server = AgentSettings(base_url="http://127.0.0.1:8000/v1")
    embedded = AgentSettings()
    assert server.context_tokens == 32768
    assert server.memory_budget == 22937  # the design note's 70% of Qwen2.5-7B's 32K
    assert embedded.context_tokens < server.context_tokens


def test_environment_overrides_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TETHER_MAX_ITERS", "4")
    monkeypatch.setenv("TETHER_PROTOCOL", "native")
    settings = AgentSettings()
    assert settings.max_iters == 4
    assert settings.protocol == "native"


def test_run_context_overrides_only_what_it_names() -> None:
    base = AgentSettings(token_budget=999)
    resolved = resolve_settings(base, {"max_iters": 2, "tool_window": None})
    assert resolved.max_iters == 2
    assert resolved.token_budget == 999
    assert resolved.tool_window == base.tool_window


def test_run_context_applies_to_a_run() -> None:
    @tool
    def lookup(key: str) -> str:
        """Look up."""
        return key

    model = ScriptedChatModel(responses=[act("lookup", f'{{"key": "{i}"}}') for i in range(5)])
    from tether import ToolRegistry

    graph = build_graph(AgentSettings(max_iters=5), model=model, registry=ToolRegistry([lookup]))
    state: dict[str, Any] = graph.invoke({"task": "t"}, context={"max_iters": 2})
    assert state["status"] == "max_steps"
    assert len(model.calls) == 2


def test_settings_are_immutable() -> None:
    settings = AgentSettings()
    with pytest.raises(Exception, match="frozen"):
        settings.max_iters = 3  # type: ignore[misc]


def test_context_temperature_is_what_the_model_gets() -> None:
    model = ScriptedChatModel(responses=[final("ok")])
    graph = build_graph(AgentSettings(), model=model)
    graph.invoke({"task": "t"}, context={"temperature": 0.7})
    assert model.calls[0].kwargs["temperature"] == 0.7
