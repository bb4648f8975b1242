"""What the nodes share is built once and invoked as LangChain would invoke it."""

from __future__ import annotations

from tether.nodes.deps import _unbound
from tether.testing import ScriptedChatModel


def test_a_plain_binding_is_called_as_its_model_with_its_arguments() -> None:
    model = ScriptedChatModel(responses=["ok"])
    bound = model.bind(tools=["lookup"], parallel_tool_calls=False)
    target, kwargs = _unbound(bound, {"response_format": "x"})
    assert target is model
    assert kwargs == {"tools": ["lookup"], "parallel_tool_calls": False, "response_format": "x"}


def test_a_binding_with_its_own_config_is_kept() -> None:
    model = ScriptedChatModel(responses=["ok"])
    bound = model.bind(tools=["lookup"]).with_config(tags=["mine"])
    target, kwargs = _unbound(bound, {})
    assert target is bound
    assert kwargs == {}
