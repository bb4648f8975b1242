"""One conversation's facts, written into a chat request by each agent's own code.

``tether``: its ReAct protocol's system prompt and the loop's own prompt renderer
(``render_prompt``), its controller notes as hints, its failure note for a reply it could not
use. ``agent_executor``: the benchmark's ReAct prompt with LangChain's ``format_log_to_str``
scratchpad; a reply it could not parse gets the ReAct parser's own observation
(``handle_parsing_errors=True``). ``create_agent``: LangChain messages (tool calls, tool
messages with their status, a note as a human message) and tool definitions, in the wire
format ChatOpenAI sends. Every layout goes through ``_convert_message_to_dict``.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_classic.agents.format_scratchpad import format_log_to_str
from langchain_classic.agents.output_parsers import ReActSingleInputOutputParser
from langchain_core.agents import AgentAction
from langchain_core.exceptions import OutputParserException
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool
from langchain_core.tools.render import render_text_description_and_args
from langchain_core.utils.function_calling import convert_to_openai_tool
from langchain_openai.chat_models.base import _convert_message_to_dict
from tether.decisions.offer import Offer
from tether.llm.protocols import ReactProtocol
from tether.memory import TiktokenCounter
from tether.memory.render import PromptFrame, render_prompt
from tether_bench.agents.agent_executor import REACT_PROMPT

from tests.bench.sim_prompts import Exchange

LAYOUTS = ("tether", "agent_executor", "create_agent")
_COUNTER = TiktokenCounter()


def body(layout: str, task: str, tools: list[BaseTool], history: list[Exchange]) -> dict[str, Any]:
    """The request ``layout``'s agent sends after ``history``."""
    if layout == "tether":
        return {"messages": _wire(_tether(task, tools, history))}
    if layout == "agent_executor":
        return {"messages": _wire([HumanMessage(_react(task, tools, history))])}
    return {
        "messages": _wire(_native(task, history)),
        "tools": [convert_to_openai_tool(t) for t in tools],
    }


def unusable(layout: str, raw: str) -> str:
    """What ``layout``'s agent sends back for a reply it could not use."""
    if layout == "agent_executor":
        try:
            ReActSingleInputOutputParser().parse(raw)
        except OutputParserException as exc:
            return str(exc.observation)
        raise AssertionError(f"the ReAct parser took {raw!r}")
    protocol = ReactProtocol()
    proposal = protocol.parse(AIMessage(raw), truncated=False)
    assert proposal["kind"] == "invalid", proposal
    return protocol.failure_note(proposal["error"])


def _wire(messages: list[BaseMessage]) -> list[dict[str, Any]]:
    return [_convert_message_to_dict(m) for m in messages]


def _args(arguments: dict[str, Any] | None) -> str:
    return json.dumps(arguments or {}, ensure_ascii=False)


def _tether(task: str, tools: list[BaseTool], history: list[Exchange]) -> list[BaseMessage]:
    system = ReactProtocol().system_prompt(Offer(tools=tuple(tools)))
    reasoning: list[Any] = []
    results: list[Any] = []
    hints: list[str] = []
    for step, ex in enumerate(history, start=1):
        if ex.tool is None:
            hints.append(ex.result)
            continue
        reasoning.append(
            {
                "step": step,
                "thought": "next step",
                "action": ex.tool,
                "action_input": ex.arguments or {},
                "tokens": 10,
            }
        )
        results.append(
            {
                "step": step,
                "tool": ex.tool,
                "arguments": ex.arguments or {},
                "result": json.loads(ex.result),
                "tokens": 10,
            }
        )
        if ex.note is not None:
            hints.append(ex.note)
    rendered = render_prompt(
        frame=PromptFrame(system, 0),
        task=task,
        reasoning=reasoning,
        results=results,
        hints=hints,
        budget=10**6,
        counter=_COUNTER,
    )
    return rendered.messages


def _react(task: str, tools: list[BaseTool], history: list[Exchange]) -> str:
    steps: list[tuple[AgentAction, str]] = []
    for ex in history:
        if ex.tool is None:
            steps.append((AgentAction("_Exception", ex.result, ex.raw or ""), ex.result))
            continue
        log = f"next step\nAction: {ex.tool}\nAction Input: {_args(ex.arguments)}"
        note = f"\n{ex.note}" if ex.note is not None else ""
        steps.append((AgentAction(ex.tool, _args(ex.arguments), log), ex.result + note))
    return REACT_PROMPT.format(
        tools=render_text_description_and_args(tools),
        tool_names=", ".join(t.name for t in tools),
        input=task,
        agent_scratchpad=format_log_to_str(steps),
    )


def _native(task: str, history: list[Exchange]) -> list[BaseMessage]:
    messages: list[BaseMessage] = [
        SystemMessage("You are a helpful assistant."),
        HumanMessage(task),
    ]
    for i, ex in enumerate(history):
        if ex.tool is None:
            messages += [AIMessage(ex.raw or ""), HumanMessage(ex.result)]
            continue
        call = {"name": ex.tool, "args": ex.arguments or {}, "id": f"call_{i}"}
        status = "error" if json.loads(ex.result).get("status") == "error" else "success"
        messages.append(AIMessage("", tool_calls=[call]))
        messages.append(ToolMessage(ex.result, tool_call_id=f"call_{i}", status=status))
        if ex.note is not None:
            messages.append(HumanMessage(ex.note))
    return messages
