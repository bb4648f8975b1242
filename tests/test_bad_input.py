"""Unusable input is refused with a clear error before any model call."""

from __future__ import annotations

from pathlib import Path

import pytest
from tether import AgentSettings, SettingsError, TaskError, build_graph
from tether.errors import ModelServerError
from tether.settings import load_settings
from tether.testing import ScriptedChatModel


def graph_and_model() -> tuple[object, ScriptedChatModel]:
    model = ScriptedChatModel(responses=["Thought: x\nFinal Answer: y"])
    return build_graph(AgentSettings(), model=model), model


@pytest.mark.parametrize("task", ["", "   \n"])
def test_empty_task_is_rejected(task: str) -> None:
    graph, model = graph_and_model()
    with pytest.raises(TaskError, match="task is empty"):
        graph.invoke({"task": task})  # type: ignore[attr-defined]
    assert model.calls == []


def test_unknown_context_key_is_rejected() -> None:
    graph, model = graph_and_model()
    with pytest.raises(Exception, match="max_iterz"):
        graph.invoke({"task": "t"}, context={"max_iterz": 3})  # type: ignore[attr-defined]
    assert model.calls == []


@pytest.mark.parametrize(
    ("field", "value"),
    [("token_budget", -1), ("reasoning_window", 0), ("tool_window", 0), ("max_steps", 0)],
)
def test_out_of_range_context_is_rejected(field: str, value: int) -> None:
    graph, model = graph_and_model()
    with pytest.raises(SettingsError, match=field):
        graph.invoke({"task": "t"}, context={field: value})  # type: ignore[attr-defined]
    assert model.calls == []


@pytest.mark.parametrize(
    ("field", "value"), [("token_budget", -5), ("reasoning_window", 0), ("memory_ratio", 1.5)]
)
def test_out_of_range_settings_are_rejected(field: str, value: float) -> None:
    with pytest.raises(SettingsError, match=field):
        load_settings(**{field: value})


def test_unknown_settings_key_is_rejected() -> None:
    with pytest.raises(SettingsError, match="budget"):
        load_settings(budget=100)


def test_bad_environment_variable_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TETHER_TOKEN_BUDGET", "-3")
    with pytest.raises(SettingsError, match="token_budget"):
        load_settings()


def test_missing_gguf_is_a_clear_error_before_any_call(tmp_path: Path) -> None:
    from tether import ToolRegistry

    missing = tmp_path / "nope.gguf"
    graph = build_graph(AgentSettings(gguf_path=str(missing)), registry=ToolRegistry())
    with pytest.raises(ModelServerError, match=r"nope\.gguf"):
        graph.invoke({"task": "t"})


def test_bad_environment_fails_the_run_not_the_import(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TETHER_MAX_STEPS", "0")
    model = ScriptedChatModel(responses=["Thought: x\nFinal Answer: y"])
    graph = build_graph(model=model)  # compiling reads no settings yet
    with pytest.raises(SettingsError, match="max_steps"):
        graph.invoke({"task": "t"})
    assert model.calls == []
