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
import re
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel

from tether.decisions.offer import Offer
from tether.llm.parsing import parse_native, parse_react
from tether.llm.structured import parse_json_action, response_format
from tether.memory.tokens import MESSAGE_OVERHEAD, TokenCounter
from tether.state import Proposal
from tether.tools.arguments import args_model

SYSTEM_HEADER = "You are a careful tool-calling agent. Work on the user's task step by step."
NOTE_ERROR_CHARS = 160
FINAL_ONLY_NOTE = (
    "That call already succeeded; its result is in the tool results. No tool is offered "
    'now: only "final_answer".'
)
"""Said when only the final answer is offered. It names no content for the answer: a small
model copies descriptive phrases and placeholders into its answer word for word."""
LOOK_FIRST_NOTE = (
    "Nothing has been looked up yet, and the task names something a listed tool can look "
    "up: call a tool now; a final answer is offered after a tool has run."
)
"""Said when the step offers no final answer (``look_first``), by a protocol that can hold
the reply to that."""


class OutputProtocol:
    """The parts of the loop that depend on the output protocol."""

    name: str = ""
    format_instructions: str = ""
    lists_tools: bool = True
    """Whether the system prompt lists the tools (native protocols send them as ``tools``)."""
    requires_calls: bool = False
    """Whether the protocol can hold a reply to a tool call (an offer's ``calls_only``)."""

    def system_prompt(self, offer: Offer) -> str:
        parts = [SYSTEM_HEADER]
        if self.lists_tools:
            parts.append(describe_tools(list(offer.tools), brief=offer.small))
        parts.append(self.format_instructions)
        return "\n\n".join(parts)

    def notes(self, offer: Offer) -> list[str]:
        """What the controller says about this offer, at the end of the prompt: the system
        message stays the same whatever is withheld, so a server's prompt cache holds."""
        if offer.final_only:
            return [FINAL_ONLY_NOTE]
        return [LOOK_FIRST_NOTE] if offer.calls_only and self.requires_calls else []

    def prepare(
        self, model: BaseChatModel, offer: Offer
    ) -> tuple[Runnable[Any, Any], dict[str, Any]]:
        """The model to call and the call's extra arguments, for this offer."""
        return model, {}

    def frame_tokens(self, system: str, offer: Offer, counter: TokenCounter) -> int:
        """Tokens of the part of every prompt that is fixed while the offer is: the system
        message (and, for native tool calling, the tool schemas the server adds)."""
        return counter.count(system) + MESSAGE_OVERHEAD

    def parse(
        self, reply: AIMessage, *, truncated: bool, repair_for: Sequence[BaseTool] = ()
    ) -> Proposal:
        """The reply as a proposal; ``truncated`` says it was cut off at max_tokens;
        ``repair_for``: the offered tools, when a reply with one reading off the format is
        read (the ``repair_output`` setting; see :func:`~tether.llm.parsing.parse_react`)."""
        raise NotImplementedError

    def failure_note(self, error: str) -> str:
        """The controller's note after a reply that could not be used. The parser's error is
        quoted and capped: it may repeat the model's words, which must not read as ours."""
        quoted = json.dumps(" ".join(error.split())[:NOTE_ERROR_CHARS], ensure_ascii=False)
        return f"Your last reply could not be used: {quoted}. {self.retry_instruction}"

    retry_instruction: str = ""


REACT_FORMAT = """Work one step at a time. To call a tool, write three lines: a line starting
with "Thought:" and one short sentence on what to do next; a line starting with "Action:" and
the name of one tool from the list above; a line starting with "Action Input:" and the tool's
arguments as one JSON object with straight double quotes, its values taken from the task or
from tool results. Then stop: the tool's result is shown to you in the next turn.

When you have everything the task needs, write a line starting with "Thought:" and a line
starting with "Final Answer:" followed by your answer for the user, with the values you found.
If no tool can do what the task needs, or information is missing, the Final Answer says so
and why. Never invent tool results."""


class ReactProtocol(OutputProtocol):
    """Thought / Action / Action Input text, repaired and parsed."""

    name = "react"
    format_instructions = REACT_FORMAT
    retry_instruction = (
        "Reply with 'Thought:' then either 'Action:' and 'Action Input:' (one JSON object) "
        "or 'Final Answer:'."
    )

    def parse(
        self, reply: AIMessage, *, truncated: bool, repair_for: Sequence[BaseTool] = ()
    ) -> Proposal:
        return parse_react(reply.text, truncated=truncated, repair_for=repair_for)


JSON_FORMAT = """Reply with one JSON object. Its "action" holds "tool" and "arguments" to call
one tool listed above, with values from the task or from tool results; or "final_answer" once
the tool results hold what the task asks, or when no tool listed can do it. "thought" says
why."""


class JsonSchemaProtocol(OutputProtocol):
    """A JSON action constrained by a schema of the current tools (``response_format``)."""

    name = "json_schema"
    format_instructions = JSON_FORMAT
    requires_calls = True
    retry_instruction = (
        'Reply with one JSON object: {"thought": ..., "action": {"tool": ..., "arguments": '
        '{...}}} or {"thought": ..., "action": {"final_answer": ...}}.'
    )

    def prepare(
        self, model: BaseChatModel, offer: Offer
    ) -> tuple[Runnable[Any, Any], dict[str, Any]]:
        schema = response_format(
            list(offer.callable),
            small=offer.small,
            final_only=offer.final_only,
            calls_only=offer.calls_only,
            grounded=dict(offer.grounded),
            held=dict(offer.held),
            facts=offer.facts,
        )
        return model, {"response_format": schema}

    def parse(
        self, reply: AIMessage, *, truncated: bool, repair_for: Sequence[BaseTool] = ()
    ) -> Proposal:
        return parse_json_action(reply.text, truncated=truncated, repair_for=repair_for)


NATIVE_FORMAT = """Call one tool at a time with the function-calling interface. When you have
everything the task needs, reply with the final answer as plain text. If no tool can do what
the task needs, or information is missing, say so and why. Never invent tool results."""


class NativeProtocol(OutputProtocol):
    """The server's own ``tool_calls`` (vLLM needs ``--enable-auto-tool-choice``)."""

    name = "native"
    format_instructions = NATIVE_FORMAT
    lists_tools = False
    requires_calls = True
    retry_instruction = "Call one tool with valid JSON arguments, or reply with the answer."

    def prepare(
        self, model: BaseChatModel, offer: Offer
    ) -> tuple[Runnable[Any, Any], dict[str, Any]]:
        """Bind the offered tools, one call per reply: vLLM defaults ``parallel_tool_calls``
        to true and would return several, of which a loop that runs one must drop some. A
        ``calls_only`` offer asks for a call (``tool_choice`` required: vLLM's guided
        decoding then admits no plain answer)."""
        if not offer.callable:
            return model, {}
        choice = {"tool_choice": "required"} if offer.calls_only else {}
        return model.bind_tools(list(offer.callable), parallel_tool_calls=False, **choice), {}

    def frame_tokens(self, system: str, offer: Offer, counter: TokenCounter) -> int:
        """The system message and the tool schemas as the chat template renders them, when
        the server can count that (vLLM's ``/tokenize`` with ``messages`` and ``tools``);
        else the system message plus the schemas' JSON, counted as text."""
        if not offer.callable:
            return super().frame_tokens(system, offer, counter)
        schemas = [convert_to_openai_tool(tool) for tool in offer.callable]
        count_chat = getattr(counter, "count_chat", None)
        if callable(count_chat):
            rendered = count_chat([{"role": "system", "content": system}], schemas)
            if isinstance(rendered, int) and rendered > 0:
                return rendered
        listed = json.dumps(schemas, ensure_ascii=False)
        return counter.count(system) + counter.count(listed) + MESSAGE_OVERHEAD

    def parse(
        self, reply: AIMessage, *, truncated: bool, repair_for: Sequence[BaseTool] = ()
    ) -> Proposal:
        return parse_native(reply, truncated=truncated, repair_for=repair_for)


PROTOCOLS: dict[str, OutputProtocol] = {
    p.name: p for p in (ReactProtocol(), JsonSchemaProtocol(), NativeProtocol())
}


def describe_tools(tools: list[BaseTool], *, brief: bool = False) -> str:
    """One block per tool: name, description and the JSON schema of its arguments.

    ``brief`` (the small-model profile): one line per tool, its argument names and the
    description's first sentence: the schema the server enforces carries the arguments'
    types and patterns, and every prompt token costs time on a CPU (the bilingual argument
    descriptions were most of SmolLM2's 935-token first prompt)."""
    if not tools:
        return "Tools: none are available right now."
    if brief:
        return "Tools:\n" + "\n".join(_brief_line(tool) for tool in tools)
    blocks = []
    for tool in tools:
        schema = args_model(tool)
        args = json.dumps(_compact_schema(schema), ensure_ascii=False) if schema else "{}"
        blocks.append(f"- {tool.name}: {tool.description}\n  arguments: {args}")
    return "Tools:\n" + "\n".join(blocks)


def _brief_line(tool: BaseTool) -> str:
    """``- name(arg, optional?): first sentence``: names only, since the schema the server
    enforces carries each argument's type, pattern and limits."""
    schema = args_model(tool)
    fields = schema.model_fields.items() if schema else []
    args = ", ".join(name if info.is_required() else f"{name}?" for name, info in fields)
    return f"- {tool.name}({args}): {first_sentence(tool.description)}"


def first_sentence(text: str) -> str:
    """The text up to its first full stop (Latin or Chinese), on one line."""
    flat = " ".join(text.split())
    match = re.search(r"(?<=[.!?])\s|(?<=[。！？])", flat)
    return flat[: match.start()].strip() if match else flat


def _compact_schema(schema: type[BaseModel]) -> dict[str, object]:
    full = schema.model_json_schema()
    props = {
        name: {k: v for k, v in spec.items() if k in ("type", "description", "enum", "format")}
        for name, spec in full.get("properties", {}).items()
    }
    return {"properties": props, "required": full.get("required", [])}
