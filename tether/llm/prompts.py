"""What the model is told: the output format and the tools available at this step."""

from __future__ import annotations

import json

from langchain_core.tools import BaseTool
from pydantic import BaseModel

REACT_FORMAT = """Answer in exactly this format, one step at a time:

Thought: what you know so far and what to do next
Action: the name of one tool from the list below
Action Input: the tool's arguments as one JSON object with straight double quotes

Then stop and wait: the tool's result will be shown to you in the next turn.
When you have everything the task needs, answer instead with:

Thought: why the task is done
Final Answer: the answer for the user

If no tool can do what the task needs, or information is missing, give a Final Answer that
says so and why. Never invent tool results."""

NATIVE_FORMAT = """Call one tool at a time with the function-calling interface. When you have
everything the task needs, reply with the final answer as plain text. If no tool can do what
the task needs, or information is missing, say so and why. Never invent tool results."""

JSON_FORMAT = """Reply with one JSON object and nothing else:
{"thought": "<your reasoning>", "action": {"tool": "<tool name>", "arguments": {<arguments>}}}
or, when the task is done or cannot be done with these tools:
{"thought": "<why you are done>", "action": {"final_answer": "<the answer for the user>"}}"""

SYSTEM_HEADER = "You are a careful tool-calling agent. Work on the user's task step by step."


def describe_tools(tools: list[BaseTool]) -> str:
    """One block per tool: name, description and JSON schema of its arguments."""
    if not tools:
        return "Tools: none are available right now."
    blocks = []
    for tool in tools:
        schema = tool.args_schema
        args = (
            json.dumps(_compact_schema(schema), ensure_ascii=False)
            if isinstance(schema, type) and issubclass(schema, BaseModel)
            else "{}"
        )
        blocks.append(f"- {tool.name}: {tool.description}\n  arguments: {args}")
    return "Tools:\n" + "\n".join(blocks)


def _compact_schema(schema: type[BaseModel]) -> dict[str, object]:
    full = schema.model_json_schema()
    props = {
        name: {k: v for k, v in spec.items() if k in ("type", "description", "enum", "format")}
        for name, spec in full.get("properties", {}).items()
    }
    return {"properties": props, "required": full.get("required", [])}


def system_prompt(tools: list[BaseTool], protocol: str) -> str:
    if protocol == "native":
        return f"{SYSTEM_HEADER}\n\n{NATIVE_FORMAT}"
    if protocol == "json_schema":
        return f"{SYSTEM_HEADER}\n\n{describe_tools(tools)}\n\n{JSON_FORMAT}"
    return f"{SYSTEM_HEADER}\n\n{describe_tools(tools)}\n\n{REACT_FORMAT}"


def parse_failure_note(error: str) -> str:
    """The observation a model gets after a reply tether could not parse."""
    return (
        f"Your last reply could not be used: {error}. Reply with 'Thought:' then either "
        "'Action:' and 'Action Input:' (one JSON object) or 'Final Answer:'."
    )
