"""Constrained decoding: the model must answer with a JSON action that matches a schema
built from the tools registered at this step, so format drift cannot happen.

Servers enforce the schema through ``response_format`` (llama.cpp turns it into a grammar;
vLLM uses its structured-outputs backend).
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.tools import BaseTool
from pydantic import BaseModel

from tether.llm.parsing import (
    TRUNCATED,
    action_proposal,
    invalid_proposal,
    parse_arguments,
)
from tether.state import Proposal

THOUGHT_CHARS = 400


def action_schema(tools: list[BaseTool]) -> dict[str, Any]:
    """JSON Schema for one step: a call of one registered tool with its arguments, or a final
    answer. Tool names are constants, so an unknown tool cannot be produced."""
    choices: list[dict[str, Any]] = [
        {
            "type": "object",
            "properties": {"tool": {"const": tool.name}, "arguments": _arguments_schema(tool)},
            "required": ["tool", "arguments"],
            "additionalProperties": False,
        }
        for tool in tools
    ]
    choices.append(
        {
            "type": "object",
            "properties": {"final_answer": {"type": "string"}},
            "required": ["final_answer"],
            "additionalProperties": False,
        }
    )
    return {
        "type": "object",
        "properties": {
            "thought": {"type": "string", "maxLength": THOUGHT_CHARS},
            "action": {"anyOf": choices},
        },
        "required": ["thought", "action"],
        "additionalProperties": False,
    }


def response_format(tools: list[BaseTool]) -> dict[str, Any]:
    """The OpenAI-style ``response_format`` that llama.cpp and vLLM both accept."""
    return {
        "type": "json_schema",
        "json_schema": {"name": "agent_step", "schema": action_schema(tools), "strict": True},
    }


def _arguments_schema(tool: BaseTool) -> dict[str, Any]:
    schema = tool.args_schema
    if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
        return {"type": "object"}
    full = schema.model_json_schema()
    full.pop("title", None)
    full.setdefault("additionalProperties", False)
    return full


def parse_json_action(text: str, *, truncated: bool = False) -> Proposal:
    """Read a constrained reply; a server that ignored the schema still gets a clear error.
    ``truncated``: the reply was cut at max_tokens, which is always a parse failure."""
    if truncated:
        return invalid_proposal(text, "", TRUNCATED)
    try:
        data = parse_arguments(text)
    except ValueError as exc:
        return invalid_proposal(text, "", str(exc).replace("Action Input", "The reply"))
    thought = data.get("thought", "")
    thought = thought.strip() if isinstance(thought, str) else ""
    action = data.get("action")
    if isinstance(action, dict) and isinstance(action.get("final_answer"), str):
        if not action["final_answer"].strip():
            return invalid_proposal(text, thought, "the final_answer is empty")
        return {"kind": "final", "thought": thought, "answer": action["final_answer"], "raw": text}
    if isinstance(action, dict) and isinstance(action.get("tool"), str):
        arguments = action.get("arguments") or {}
        if not isinstance(arguments, dict):
            error = f"arguments must be a JSON object, got {json.dumps(arguments)[:100]}"
            return invalid_proposal(text, thought, error)
        return action_proposal(text, thought, action["tool"], arguments)
    error = 'expected {"thought": ..., "action": {"tool", "arguments"} or {"final_answer"}}'
    return invalid_proposal(text, thought, error)
