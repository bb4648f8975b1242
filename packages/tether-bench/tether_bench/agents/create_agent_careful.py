"""create_agent as a careful user runs it: its recommended middleware plus a hook that sends a
malformed reply back to the model instead of taking it for the answer.

LangChain's docs show the way (custom middleware with ``@after_model`` and ``jump_to``): a
reply that carries no usable call but meant one is answered with a message naming what was
wrong, and the model is asked again. Three replies count: a call whose arguments did not
parse (``invalid_tool_calls``), an empty reply, and a call written as text (a JSON object
naming a listed tool, what a server's tool-call parser returns when it cannot read a call).
Everything else (the limits, the retries, the approval gate) is ``create_agent``'s.
"""

from __future__ import annotations

import re
from typing import Any

from langchain.agents.middleware import AgentMiddleware, after_model
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool

from tether_bench.agents.base import ChatSettings
from tether_bench.agents.create_agent import CreateAgentAgent
from tether_bench.gates import ApprovalDesk
from tether_bench.harness import VariantSettings

_NAMED = re.compile(r'"name"\s*:\s*"([A-Za-z_0-9]+)"')
NOTE = (
    "Your last reply was not a usable tool call ({what}). Call the tool with JSON arguments "
    "through the tool-calling interface, or reply with your final answer as plain text."
)


def malformed(message: AIMessage, tools: set[str]) -> str | None:
    """What is wrong with a reply that meant a call but gave none usable, else None."""
    if message.tool_calls:
        return None
    if message.invalid_tool_calls:
        return "its arguments are not valid JSON"
    text = message.text.strip()
    if not text:
        return "it was empty"
    if any(name in tools for name in _NAMED.findall(text)):
        return "the call was written as text"
    return None


def send_back(tools: set[str]) -> AgentMiddleware[Any, Any, Any]:
    """The hook: a malformed reply gets a note (a tool message for each unparsed call) and
    the model is called again."""

    @after_model(can_jump_to=["model"])
    def ask_again(state: Any, runtime: Any) -> dict[str, Any] | None:
        last = state["messages"][-1]
        what = malformed(last, tools) if isinstance(last, AIMessage) else None
        if what is None:
            return None
        note = NOTE.format(what=what)
        bad = [
            ToolMessage(note, tool_call_id=c.get("id") or "", status="error")
            for c in last.invalid_tool_calls
        ]
        return {"messages": bad or [HumanMessage(note)], "jump_to": "model"}

    return ask_again


class CreateAgentCarefulAgent(CreateAgentAgent):
    """``create_agent`` with its recommended middleware and the send-back hook."""

    name = "create_agent_careful"
    run_name = "create_agent"

    def agent_middleware(
        self,
        desk: ApprovalDesk,
        tools: list[BaseTool],
        chat: ChatSettings,
        instructions: str | None = None,
    ) -> list[AgentMiddleware[Any, Any, Any]]:
        hook = send_back({t.name for t in tools})
        return [*super().agent_middleware(desk, tools, chat, instructions), hook]

    def settings(self) -> VariantSettings:
        base = super().settings()
        return VariantSettings(
            **{**base.__dict__, "agent": self.name, "output_repair": "sent back (hook)"}
        )


__all__ = ["CreateAgentCarefulAgent", "malformed", "send_back"]
