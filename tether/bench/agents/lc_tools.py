"""The registry's tools as LangChain tools, so the baselines call exactly what tether calls.

Each :class:`RegistryTool` has the registry tool's name, description and args_schema (what the
model is shown) and hands the raw arguments to ``registry.invoke``, which validates them and
answers with the same envelope tether sees, returned as JSON text. LangChain's own argument
validation is bypassed on purpose: otherwise a bad argument would be a LangChain exception for
the baselines and an envelope for tether, and tool behaviour would differ.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.tools import BaseTool

from tether.errors import TransientToolError
from tether.tools.envelope import Envelope, error
from tether.tools.registry import ToolRegistry

BAD_INPUT_HELP = (
    "Action Input must be one JSON object with double-quoted keys and strings, "
    'e.g. {"order_id": "ORD-2024-001"}.'
)


class RegistryTool(BaseTool):
    """One registry tool. ``text_input``: the input is a ReAct Action Input string to decode
    with ``json.loads``; ``raise_transient``: a transient error envelope is raised as
    :class:`TransientToolError` so a retry middleware can retry it."""

    registry: ToolRegistry
    text_input: bool = False
    raise_transient: bool = False

    def _to_args_and_kwargs(
        self, tool_input: str | dict[str, Any], tool_call_id: str | None
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (tool_input,), {}

    def _run(self, tool_input: Any) -> str:
        if isinstance(tool_input, str):
            parsed = _decode(tool_input) if self.text_input else None
            if parsed is None:
                return _dump(
                    error(
                        f"{self.name}: could not read the Action Input as JSON. {BAD_INPUT_HELP}",
                        error_type="validation_error",
                    )
                )
            tool_input = parsed
        result = self.registry.invoke(self.name, tool_input)
        if self.raise_transient and result["status"] == "error" and result["meta"].get("transient"):
            raise TransientToolError(result.get("message", "transient failure"))
        return _dump(result)


def _decode(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text.strip())
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _dump(result: Envelope) -> str:
    return json.dumps(result, ensure_ascii=False, default=str)


def registry_tools(
    registry: ToolRegistry, *, text_input: bool = False, raise_transient: bool = False
) -> list[BaseTool]:
    """Every tool in ``registry``, wrapped."""
    return [
        RegistryTool(
            name=tool.name,
            description=tool.description,
            args_schema=tool.args_schema,
            registry=registry,
            text_input=text_input,
            raise_transient=raise_transient,
        )
        for tool in registry.tools()
    ]
