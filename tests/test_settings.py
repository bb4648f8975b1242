"""Settings: one typed place, overridable by environment and per run."""

from __future__ import annotations

from typing import Any

import pytest
from tether import AgentSettings, ToolRegistry, build_graph, tool
from tether.errors import SettingsError
from tether.nodes import deps as deps_module
from tether.settings import load_settings, resolve_settings
from tether.testing import ScriptedChatModel

from tests.scripts import act, final, lookup


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
    monkeypatch.setenv("TETHER_MAX_STEPS", "4")
    monkeypatch.setenv("TETHER_PROTOCOL", "native")
    settings = AgentSettings()
    assert settings.max_steps == 4
    assert settings.protocol == "native"


def test_an_unset_protocol_is_json_schema_for_the_embedded_model_and_a_server() -> None:
    assert AgentSettings().protocol is None
    assert AgentSettings().protocol_name == "json_schema"  # the embedded model
    assert AgentSettings(base_url="http://127.0.0.1:8000/v1").protocol_name == "json_schema"


@pytest.mark.parametrize("protocol", ["react", "json_schema", "native"])
@pytest.mark.parametrize("base_url", [None, "http://127.0.0.1:8000/v1"])
def test_a_protocol_set_always_wins(
    protocol: str, base_url: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert AgentSettings(protocol=protocol, base_url=base_url).protocol_name == protocol  # type: ignore[arg-type]
    monkeypatch.setenv("TETHER_PROTOCOL", protocol)
    assert AgentSettings(base_url=base_url).protocol_name == protocol
    assert load_settings(base_url=base_url).protocol_name == protocol


def test_a_model_passed_in_gets_react_unless_asked() -> None:
    model = ScriptedChatModel(responses=[act("lookup", '{"key": "a"}'), final("value of a")])
    graph = build_graph(AgentSettings(), model=model, registry=ToolRegistry([lookup]))
    state: dict[str, Any] = graph.invoke({"task": "t"})  # ReAct replies, read as ReAct
    assert (state["status"], state["answer"]) == ("completed", "value of a")
    assert "response_format" not in model.calls[0].kwargs
    chosen = ScriptedChatModel(responses=['{"thought": "t", "action": {"final_answer": "x"}}'])
    graph = build_graph(AgentSettings(protocol="json_schema"), model=chosen)
    assert graph.invoke({"task": "t"})["answer"] == "x"
    assert "response_format" in chosen.calls[0].kwargs


def test_run_context_overrides_only_what_it_names() -> None:
    base = AgentSettings(token_budget=999)
    resolved = resolve_settings(base, {"max_steps": 2, "tool_window": None})
    assert resolved.max_steps == 2
    assert resolved.token_budget == 999
    assert resolved.tool_window == base.tool_window


def test_run_context_applies_to_a_run() -> None:
    @tool
    def lookup(key: str) -> str:
        """Look up."""
        return key

    model = ScriptedChatModel(responses=[act("lookup", f'{{"key": "{i}"}}') for i in range(5)])
    from tether import ToolRegistry

    graph = build_graph(AgentSettings(max_steps=5), model=model, registry=ToolRegistry([lookup]))
    state: dict[str, Any] = graph.invoke({"task": "t"}, context={"max_steps": 2})
    assert state["status"] == "max_steps"
    assert len(model.calls) == 2 + 1  # and the answer asked for at the cap


def test_settings_are_immutable() -> None:
    settings = AgentSettings()
    with pytest.raises(Exception, match="frozen"):
        settings.max_steps = 3  # type: ignore[misc]


def test_context_temperature_is_what_the_model_gets() -> None:
    model = ScriptedChatModel(responses=[final("ok")])
    graph = build_graph(AgentSettings(), model=model)
    graph.invoke({"task": "t"}, context={"temperature": 0.7})
    assert model.calls[0].kwargs["temperature"] == 0.7


def test_overrides_are_validated_like_the_settings_themselves() -> None:
    base = AgentSettings(base_url="http://127.0.0.1:8000/v1", approval_tools=["pay"])
    changes: dict[str, Any] = {"max_steps": 7, "protocol": "native", "approval_tools": []}
    made = base.with_overrides(changes)
    assert made == AgentSettings.model_validate(base.model_dump() | changes)
    assert isinstance(made, AgentSettings)
    assert base.approval_tools == ["pay"]
    with pytest.raises(Exception, match="frozen"):
        made.max_steps = 3  # type: ignore[misc]


@pytest.mark.parametrize(
    ("bad", "field"),
    [({"max_steps": 0}, "max_steps"), ({"protocol": "xml"}, "protocol"), ({"nope": 1}, "nope")],
)
def test_invalid_overrides_name_the_field(bad: dict[str, Any], field: str) -> None:
    with pytest.raises(SettingsError, match=f"invalid tether settings: {field}: "):
        AgentSettings().with_overrides(bad)


def test_overrides_keep_the_base_values_over_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base = AgentSettings(max_steps=5)
    monkeypatch.setenv("TETHER_MAX_STEPS", "9")
    assert base.with_overrides({"tool_window": 2}).max_steps == 5


def test_each_run_resolves_its_own_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []

    def counted(base: AgentSettings, context: Any) -> AgentSettings:
        calls.append(context)
        return resolve_settings(base, context)

    monkeypatch.setattr(deps_module, "resolve_settings", counted)
    replies = [act("lookup", f'{{"key": "{i}"}}') for i in range(3)] + [final("done")]
    model = ScriptedChatModel(responses=replies * 2)
    graph = build_graph(AgentSettings(), model=model, registry=ToolRegistry([lookup]))
    statuses = []
    for budget in (4, 3):  # two runs of one graph, each with its own context
        state: dict[str, Any] = graph.invoke({"task": "t"}, context={"max_steps": budget})
        statuses.append(state["status"])
    assert statuses == ["completed", "max_steps"]
    assert len(model.calls) == 4 + 3 + 1  # the second run asks for an answer at its cap
    assert list(dict.fromkeys(c.max_steps for c in calls)) == [4, 3]  # each run its own
