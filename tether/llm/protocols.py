"""Output protocols: how the model is asked to answer, and how its answer is read.

One object per protocol holds everything that depends on it: the format instructions and
tool listing in the system prompt, how the model is called (bound tools, a response schema),
how a reply becomes a :class:`~tether.state.Proposal`, and the note a model gets after a
reply that could not be used. The loop asks the protocol; nothing else branches on it.

To add a protocol, subclass :class:`OutputProtocol` and add it to :data:`PROTOCOLS` (and to
the ``protocol`` setting's Literal).
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from pydantic import BaseModel

from tether.llm.parsing import parse_native, parse_react
from tether.llm.structured import parse_json_action, response_format
from tether.state import Proposal

SYSTEM_HEADER = "You are a careful tool-calling agent. Work on the user's task step by step."
NOTE_ERROR_CHARS = 160


class OutputProtocol:
    """The parts of the loop that depend on the output protocol."""

    name: str = ""
    format_instructions: str = ""
    lists_tools: bool = True
    """Whether the system prompt lists the tools (native protocols send them as ``tools``)."""

    def system_prompt(self, tools: list[BaseTool]) -> str:
        parts = [SYSTEM_HEADER]
        if self.lists_tools:
            parts.append(describe_tools(tools))
        parts.append(self.format_instructions)
        return "\n\n".join(parts)

    def prepare(
        self, model: BaseChatModel, tools: list[BaseTool]
    ) -> tuple[Runnable[Any, Any], dict[str, Any]]:
        """The model to call and the call's extra arguments, for these tools."""
        return model, {}

    def parse(self, reply: AIMessage, *, truncated: bool) -> Proposal:
        """The reply as a proposal; ``truncated`` says it was cut off at max_tokens."""
        raise NotImplementedError

    def failure_note(self, error: str) -> str:
        """The controller's note after a reply that could not be used. The parser's error is
        quoted and capped: it may repeat the model's words, which must not read as ours."""
        quoted = json.dumps(" ".join(error.split())[:NOTE_ERROR_CHARS], ensure_ascii=False)
        return f"Your last reply could not be used: {quoted}. {self.retry_instruction}"

    retry_instruction: str = ""


REACT_FORMAT = """Answer in exactly this format, one step at a time:

Thought: what you know so far and what to do next
Action: the name of one tool from the list above
Action Input: the tool's arguments as one JSON object with straight double quotes

Then stop and wait: the tool's result will be shown to you in the next turn.
When you have everything the task needs, answer instead with:

Thought: why the task is done
Final Answer: the answer for the user

If no tool can do what the task needs, or information is missing, give a Final Answer that
says so and why. Never invent tool results."""


class ReactProtocol(OutputProtocol):
    """Thought / Action / Action Input text, repaired and parsed."""

    name = "react"
    format_instructions = REACT_FORMAT
    retry_instruction = (
        "Reply with 'Thought:' then either 'Action:' and 'Action Input:' (one JSON object) "
        "or 'Final Answer:'."
    )

    def parse(self, reply: AIMessage, *, truncated: bool) -> Proposal:
        return parse_react(reply.text, truncated=truncated)


JSON_FORMAT = """Reply with one JSON object and nothing else: either a tool call,
{"thought": "<your reasoning>", "action": {"tool": "<tool name>", "arguments": {<arguments>}}}
or, when the task is done or cannot be done with these tools, a final answer,
{"thought": "<why you are done>", "action": {"final_answer": "<the answer for the user>"}}"""


class JsonSchemaProtocol(OutputProtocol):
    """A JSON action constrained by a schema of the current tools (``response_format``)."""

    name = "json_schema"
    format_instructions = JSON_FORMAT
    retry_instruction = (
        'Reply with one JSON object: {"thought": ..., "action": {"tool": ..., "arguments": '
        '{...}}} or {"thought": ..., "action": {"final_answer": ...}}.'
    )

    def prepare(
        self, model: BaseChatModel, tools: list[BaseTool]
    ) -> tuple[Runnable[Any, Any], dict[str, Any]]:
        return model, {"response_format": response_format(tools)}

    def parse(self, reply: AIMessage, *, truncated: bool) -> Proposal:
        return parse_json_action(reply.text, truncated=truncated)


NATIVE_FORMAT = """Call one tool at a time with the function-calling interface. When you have
everything the task needs, reply with the final answer as plain text. If no tool can do what
the task needs, or information is missing, say so and why. Never invent tool results."""


class NativeProtocol(OutputProtocol):
    """The server's own ``tool_calls`` (vLLM needs ``--enable-auto-tool-choice``)."""

    name = "native"
    format_instructions = NATIVE_FORMAT
    lists_tools = False
    retry_instruction = "Call one tool with valid JSON arguments, or reply with the answer."

    def prepare(
        self, model: BaseChatModel, tools: list[BaseTool]
    ) -> tuple[Runnable[Any, Any], dict[str, Any]]:
        if not tools:
            return model, {}
        return model.bind_tools(tools), {}

    def parse(self, reply: AIMessage, *, truncated: bool) -> Proposal:
        return parse_native(reply, truncated=truncated)


PROTOCOLS: dict[str, OutputProtocol] = {
    p.name: p for p in (ReactProtocol(), JsonSchemaProtocol(), NativeProtocol())
}


def describe_tools(tools: list[BaseTool]) -> str:
    """One block per tool: name, description and the JSON schema of its arguments."""
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
