"""The final-answer check: an answer that skipped a lookup the task names, states values no
result holds, or leaves undone a change the task asked for, is sent back once with a note;
the second answer is taken as written."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware.types import (
    AgentMiddleware,
    ContextT,
    ModelRequest,
    ModelResponse,
    PrivateStateAttr,
    ResponseT,
    hook_config,
)
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command, Overwrite

from tether.decisions import final_check
from tether.middleware.common import (
    MARK,
    NOTE_ID,
    TetherState,
    as_settings,
    new_run,
    tool_message,
    tool_result,
    with_update,
)
from tether.settings import AgentSettings

ToolResponse = ToolMessage | Command[Any]


def fold_grounds(current: dict[str, Any], call: dict[str, Any]) -> dict[str, Any]:
    """Reducer: the run's grounds (``{}`` before any call) with one more tool call folded in
    by :func:`tether.decisions.final_check.record_result`."""
    grounds: Any = current or None
    folded = final_check.record_result(
        grounds, call["task"], call["tool"], call["arguments"], call["result"]
    )
    return dict(folded)


class FinalAnswerCheckState(TetherState[ResponseT]):
    tether_task: NotRequired[Annotated[str, PrivateStateAttr]]
    """The run's task: the user's message that started it."""
    tether_grounds: NotRequired[Annotated[dict[str, Any], PrivateStateAttr, fold_grounds]]
    """What the run's tool calls established (:class:`tether.decisions.grounding.Grounds`)."""
    tether_sent_back: NotRequired[Annotated[bool, PrivateStateAttr]]
    """An answer was sent back in this run; the next is taken as written."""


class FinalAnswerCheckMiddleware(
    AgentMiddleware[FinalAnswerCheckState[ResponseT], ContextT, ResponseT]
):
    """Runs :func:`tether.decisions.final_check.check_final` on a reply without tool calls.
    When it returns a note, the note is added as a user message and the model is asked
    again (``jump_to="model"``), once per run. The note holds tether's words, registered
    tool names and single-token values only: no text of a tool or of the model.

    ``tools``: the agent's tools (the check looks for a lookup or a change the task names);
    unset, the tools of the model requests it has seen are used.

    Hooks: ``before_agent`` (the task), ``after_model`` (can jump back to the model),
    ``wrap_model_call`` (the tools offered), ``wrap_tool_call`` (what each call
    established). State: task, grounds and whether an answer was sent back (private).
    Settings: ``check_final``.
    """

    state_schema = FinalAnswerCheckState  # type: ignore[assignment]

    def __init__(
        self, settings: AgentSettings | None = None, *, tools: Sequence[BaseTool] | None = None
    ) -> None:
        super().__init__()
        self.settings = as_settings(settings)
        self._tools: dict[str, BaseTool] = {tool.name: tool for tool in tools or ()}

    def before_agent(self, state: Any, runtime: Runtime[ContextT]) -> dict[str, Any] | None:
        task = next(
            (m.text for m in reversed(state["messages"]) if isinstance(m, HumanMessage)), ""
        )
        return {
            **new_run(),
            "tether_task": task,
            "tether_grounds": Overwrite({}),
            "tether_sent_back": False,
        }

    async def abefore_agent(self, state: Any, runtime: Runtime[ContextT]) -> dict[str, Any] | None:
        return self.before_agent(state, runtime)

    @hook_config(can_jump_to=["model"])
    def after_model(self, state: Any, runtime: Runtime[ContextT]) -> dict[str, Any] | None:
        note = self.note(state)
        if note is None:
            return None
        answer = state["messages"][-1]
        sent = HumanMessage(note, id=f"{NOTE_ID}check-{answer.id}")
        return {"messages": [sent], "tether_sent_back": True, "jump_to": "model"}

    @hook_config(can_jump_to=["model"])
    async def aafter_model(self, state: Any, runtime: Runtime[ContextT]) -> dict[str, Any] | None:
        return self.after_model(state, runtime)

    def note(self, state: Any) -> str | None:
        """The note to send the last reply back with, or None to take it."""
        messages = state.get("messages") or []
        reply = messages[-1] if messages else None
        if not isinstance(reply, AIMessage) or reply.tool_calls or not self.settings.check_final:
            return None
        if (
            state.get("tether_sent_back")
            or state.get("tether_status")
            or state.get("tether_closing")
        ):
            return None  # sent back once already, or an answer tether asked for at a stop
        task = state.get("tether_task") or ""
        grounds: Any = state.get("tether_grounds") or None
        return final_check.check_final(task, reply.text, grounds, list(self._tools.values()))

    def wrap_model_call(
        self,
        request: ModelRequest[ContextT],
        handler: Callable[[ModelRequest[ContextT]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        self._learn(request)
        return handler(request)

    async def awrap_model_call(
        self,
        request: ModelRequest[ContextT],
        handler: Callable[[ModelRequest[ContextT]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        self._learn(request)
        return await handler(request)

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolResponse]
    ) -> ToolResponse:
        return self._grounded(request, handler(request))

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolResponse]],
    ) -> ToolResponse:
        return self._grounded(request, await handler(request))

    def _learn(self, request: ModelRequest[Any]) -> None:
        for tool in request.tools:
            if isinstance(tool, BaseTool) and tool.name not in self._tools:
                self._tools[tool.name] = tool

    def _grounded(self, request: ToolCallRequest, result: ToolResponse) -> ToolResponse:
        """The answer with what the call established (a call tether answered from its record
        establishes nothing new)."""
        call_id = request.tool_call["id"]
        message = tool_message(result, call_id)
        if message is not None and message.additional_kwargs.get(MARK) in ("recall", "repeat"):
            return result
        call = {
            "task": request.state.get("tether_task") or "",
            "tool": request.tool_call["name"],
            "arguments": request.tool_call.get("args") or {},
            "result": tool_result(message, request.tool),
        }
        return with_update(result, call_id, {"tether_grounds": call})
