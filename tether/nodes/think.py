"""think: call the model with the composed prompt, record what it cost and what it proposed."""

from __future__ import annotations

from typing import Any

import openai
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime

from tether.errors import ModelCallError
from tether.graph import policy
from tether.graph.state import AgentState, Proposal, TraceEvent, Usage
from tether.llm.parsing import parse_native, parse_react
from tether.llm.structured import parse_json_action, response_format
from tether.memory.buffers import ReasoningEntry, windowed
from tether.memory.tokens import TokenCounter, count_messages
from tether.nodes.deps import Deps
from tether.settings import AgentSettings


def make_think(deps: Deps) -> Any:
    def think(state: AgentState, runtime: Runtime[Any]) -> dict[str, Any]:
        settings = deps.settings_for(runtime)
        messages = state["prompt"]
        step = state.get("steps", 0) + 1
        tools = [t for name in state.get("tool_names", []) if (t := deps.registry.get(name))]
        model, call_kwargs = _prepare(deps.model_for(settings), settings, tools)
        call_kwargs["temperature"] = state["temperature"]
        reply = _call(model, messages, call_kwargs, settings)
        usage, reported = _usage(reply, messages, deps.counter_for(settings))
        proposal = _parse(reply, settings)
        if proposal["kind"] == "action":
            tool = deps.registry.get(proposal["tool"])
            proposal["needs_approval"] = policy.needs_approval(tool, settings)
        entry: ReasoningEntry = {
            "step": step,
            "thought": proposal["thought"],
            "action": proposal.get("tool"),
            "action_input": proposal.get("arguments"),
        }
        events: list[TraceEvent] = [
            {
                "step": step,
                "event": "model_call",
                "detail": {
                    "temperature": state["temperature"],
                    "usage": usage,
                    "usage_source": "server" if reported else "estimated",
                    "prompt_estimate": state.get("prompt_tokens_estimate"),
                    **_proposal_detail(proposal),
                },
            }
        ]
        if not reported:
            events.append(
                {
                    "step": step,
                    "event": "usage_missing",
                    "detail": {"note": "the server reported no usage; tokens were counted"},
                }
            )
        return {
            "steps": step,
            "usage": usage,
            "proposal": proposal,
            "result": None,
            "tool_attempts": 0,
            "reasoning_buffer": windowed([entry], settings.reasoning_window),
            "trace": events,
        }

    return think


def _prepare(
    model: BaseChatModel, settings: AgentSettings, tools: list[BaseTool]
) -> tuple[Any, dict[str, Any]]:
    """The model and call arguments for this step's protocol."""
    if settings.protocol == "native":
        return (model.bind_tools(tools) if tools else model), {}
    if settings.protocol == "json_schema":
        return model, {"response_format": response_format(tools)}
    return model, {}


def _parse(reply: AIMessage, settings: AgentSettings) -> Proposal:
    if settings.protocol == "native":
        return parse_native(reply)
    if settings.protocol == "json_schema":
        return parse_json_action(reply.text)
    return parse_react(reply.text)


def _call(
    model: Any, messages: list[BaseMessage], kwargs: dict[str, Any], settings: AgentSettings
) -> AIMessage:
    try:
        reply = model.invoke(messages, **kwargs)
    except openai.LengthFinishReasonError as exc:
        return _cut_off_reply(exc)  # a schema-constrained reply hit max_tokens
    except openai.APITimeoutError as exc:  # a subclass of APIConnectionError: check it first
        raise ModelCallError(
            f"the model at {_where(model, settings)} did not answer within "
            f"{settings.request_timeout:g}s (raise request_timeout for a slow server)"
        ) from exc
    except openai.APIConnectionError as exc:
        raise ModelCallError(f"cannot reach the model at {_where(model, settings)}: {exc}") from exc
    except openai.APIStatusError as exc:
        raise ModelCallError(f"the model server answered {exc.status_code}: {exc.message}") from exc
    if not isinstance(reply, AIMessage):
        raise ModelCallError(f"the model returned {type(reply).__name__}, not an AIMessage")
    return reply


def _where(model: Any, settings: AgentSettings) -> str:
    bound = getattr(model, "bound", model)  # native protocol wraps the model in a binding
    return str(getattr(bound, "openai_api_base", None) or settings.base_url or "the endpoint")


def _cut_off_reply(exc: openai.LengthFinishReasonError) -> AIMessage:
    """The truncated text and its usage, so the step fails as a parse failure, not a crash."""
    completion = exc.completion
    text = (completion.choices[0].message.content or "") if completion.choices else ""
    usage = completion.usage
    meta: Any = None
    if usage is not None:
        meta = {
            "input_tokens": usage.prompt_tokens,
            "output_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens,
        }
    return AIMessage(text, usage_metadata=meta)


def _usage(
    reply: AIMessage, messages: list[BaseMessage], counter: TokenCounter
) -> tuple[Usage, bool]:
    """Server-reported usage when present; otherwise a count, flagged as such."""
    meta = reply.usage_metadata
    if meta and meta.get("total_tokens"):
        return (
            {
                "input_tokens": meta["input_tokens"],
                "output_tokens": meta["output_tokens"],
                "total_tokens": meta["total_tokens"],
            },
            True,
        )
    prompt = count_messages(counter, messages)
    output = counter.count(reply.text)
    return {"input_tokens": prompt, "output_tokens": output, "total_tokens": prompt + output}, False


def _proposal_detail(proposal: Proposal) -> dict[str, Any]:
    detail: dict[str, Any] = {"kind": proposal["kind"], "thought": proposal["thought"]}
    for key in ("tool", "arguments", "answer", "error"):
        if key in proposal:
            detail[key] = proposal[key]  # type: ignore[literal-required]
    return detail
