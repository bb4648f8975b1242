"""Constrained decoding: the model must answer with a JSON action that matches a schema
built from the tools registered at this step, so format drift cannot happen.

Servers enforce the schema through ``response_format`` (llama.cpp turns it into a grammar;
vLLM uses its structured-outputs backend).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.tools import BaseTool

from tether.llm.parsing import (
    TRUNCATED,
    action_proposal,
    bare_value,
    invalid_proposal,
    parse_arguments,
)
from tether.llm.schema_shape import for_grammar, limit_to_values, merge_defs, tool_arguments
from tether.state import Proposal

THOUGHT_CHARS = 400
SMALL_ANSWER_CHARS = 120


def action_schema(
    tools: list[BaseTool],
    *,
    small: bool = False,
    final_only: bool = False,
    calls_only: bool = False,
    grounded: Mapping[str, Sequence[str]] | None = None,
    held: Mapping[str, Sequence[str]] | None = None,
    facts: Sequence[Sequence[str]] = (),
) -> dict[str, Any]:
    """JSON Schema for one step: a call of one offered tool with its arguments, or a final
    answer. Tool names are constants, so an unknown tool cannot be produced.

    ``small`` (the small-model profile): the action alone, no thought (SmolLM2's, written
    after the action, was a tenth of each step's tokens and said nothing), and every
    free-text field is length-capped. ``final_only``:
    only the final-answer branch is offered (the model still writes the answer itself).
    ``calls_only``: no final-answer branch (ignored when there is no tool to call).
    ``grounded``: per id pattern, the only values an argument of that pattern may take;
    ``held``: per argument name, the only values it may take (and it is required).
    ``facts``: the answer picks among them (see :func:`_answer_branch`).
    """
    defs: dict[str, Any] = {}
    offered = [] if final_only else tools
    choices = [_tool_branch(tool, defs, grounded, held or {}) for tool in offered]
    if not (calls_only and choices):
        choices.append(_answer_branch(small, facts))
    thought = {"thought": {"type": "string", "maxLength": THOUGHT_CHARS}}
    properties = {**({} if small else thought), "action": {"anyOf": choices}}
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }
    if defs:
        schema["$defs"] = defs
    shaped: dict[str, Any] = for_grammar(schema, cap_free_text=small)
    return shaped


def _tool_branch(
    tool: BaseTool,
    defs: dict[str, Any],
    grounded: Mapping[str, Sequence[str]] | None,
    held: Mapping[str, Sequence[str]],
) -> dict[str, Any]:
    """The branch that calls ``tool``: its name a constant, its arguments its schema (ids
    limited to ``grounded``, those named in ``held`` required and limited to its values),
    shared definitions merged into ``defs``."""
    arguments, tool_defs = tool_arguments(tool)
    if grounded:
        arguments = limit_to_values(arguments, grounded)
        tool_defs = limit_to_values(tool_defs, grounded)
    for name in [name for name in arguments.get("properties", {}) if name in held]:
        arguments["properties"][name] = {"enum": list(held[name])}
        arguments["required"] = [*dict.fromkeys([*arguments.get("required", []), name])]
    return {
        "type": "object",
        "properties": {
            "tool": {"const": tool.name},
            "arguments": merge_defs(defs, arguments, tool_defs, tool.name),
        },
        "required": ["tool", "arguments"],
        "additionalProperties": False,
    }


def _answer_branch(small: bool, facts: Sequence[Sequence[str]] = ()) -> dict[str, Any]:
    """The branch that gives the final answer: text (length-capped for a small model), or
    with ``facts`` one of each group of them in turn, which the reply's reader joins."""
    answer: dict[str, Any] = {"type": "string", "maxLength": SMALL_ANSWER_CHARS}
    if facts:
        answer = {"type": "array", "prefixItems": [{"enum": [*group]} for group in facts]}
        answer |= {"minItems": len(facts), "maxItems": len(facts)}
    elif not small:
        del answer["maxLength"]
    return {
        "type": "object",
        "properties": {"final_answer": answer},
        "required": ["final_answer"],
        "additionalProperties": False,
    }


def response_format(tools: list[BaseTool], **options: Any) -> dict[str, Any]:
    """The OpenAI-style ``response_format`` that llama.cpp and vLLM both accept, for the
    schema :func:`action_schema` builds with these ``options``."""
    schema = action_schema(tools, **options)
    return {
        "type": "json_schema",
        "json_schema": {"name": "agent_step", "schema": schema, "strict": True},
    }


def parse_json_action(
    text: str, *, truncated: bool = False, repair_for: Sequence[BaseTool] = ()
) -> Proposal:
    """Read a constrained reply; a server that ignored the schema still gets a clear error.
    ``truncated``: the reply was cut at max_tokens, which is always a parse failure.
    ``repair_for`` (see :func:`~tether.llm.parsing.parse_react`): prose may follow the
    object, and an offered tool's arguments may be a bare value."""
    if truncated:
        return invalid_proposal(text, "", TRUNCATED)
    repairs: list[str] = []
    try:
        data = parse_arguments(text, repairs, prose=bool(repair_for))
    except ValueError as exc:
        return invalid_proposal(text, "", str(exc).replace("Action Input", "The reply"))
    thought = data.get("thought", "")
    thought = thought.strip() if isinstance(thought, str) else ""
    action = data.get("action")
    picks = action.get("final_answer") if isinstance(action, dict) else None
    if isinstance(picks, list) and all(isinstance(pick, str) for pick in picks):
        action = {"final_answer": " ".join(dict.fromkeys(picks))}  # facts picked, each once
    if isinstance(action, dict) and isinstance(action.get("final_answer"), str):
        if not action["final_answer"].strip():
            return invalid_proposal(text, thought, "the final_answer is empty")
        answer = action["final_answer"]
        final: Proposal = {"kind": "final", "thought": thought, "answer": answer, "raw": text}
        if repairs:
            final["repairs"] = repairs
        return final
    if isinstance(action, dict) and isinstance(action.get("tool"), str):
        tool = next((t for t in repair_for if t.name == action["tool"]), None)
        if tool is None and "json_then_prose" in repairs:
            return parse_json_action(text)  # no repair for a tool not offered
        arguments = action.get("arguments") or {}
        if not isinstance(arguments, dict):
            bare = bare_value(arguments, tool)
            if bare is None:
                error = f"arguments must be a JSON object, got {json.dumps(arguments)[:100]}"
                return invalid_proposal(text, thought, error)
            arguments, repairs = bare, [*repairs, "bare_value"]
        return action_proposal(text, thought, action["tool"], arguments, repairs=repairs)
    error = 'expected {"thought": ..., "action": {"tool", "arguments"} or {"final_answer"}}'
    return invalid_proposal(text, thought, error)
