"""The instruments every agent is measured with: a chat-model callback and a recording registry.

Both stamp times against one clock started with the run, so a step's model time, tool time and
framework overhead add up. Tool calls are attributed to the model call that preceded them.

Times stay in the record, never in what an agent is shown: the envelopes the recording
registry hands back carry ``meta.latency_s`` 0.0 (see :func:`stopped_clock`), so the same call
gives every agent the same text, run after run, and no prompt, token count or decision of the
model depends on how long a tool took.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, LLMResult
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from tether import ToolRegistry
from tether.tools import RUN_ID_KEY, Envelope

from tether_bench.records import Approval, ModelCall, Outcome, RunRecord, ToolCall

ToolListener = Callable[[ToolCall], None]
_ACTION_LINE = re.compile(r"^\s*Action\s*[:：]", re.MULTILINE)
_JSON_CALL = re.compile(r'"tool"\s*:\s*"')
"""A JSON action naming a tool (tether's json_schema protocol): ``{"action": {"tool": ...}}``."""


def stopped_clock() -> float:
    """The clock the recording registry gives tether's registry: it never moves, so every
    envelope's ``meta.latency_s`` is 0.0. A tool's real duration is the ToolCall's
    ``end - start``, timed by the recorder; a wall-clock figure inside the envelope would reach
    the prompt, its token count and the model's reading of it (two equal results that differ
    in their latency are not equal text), so identical runs would differ."""
    return 0.0


class RunRecorder(BaseCallbackHandler):
    """Times model calls (start to parsed reply) and keeps their server-reported usage."""

    run_inline = True  # called on the caller's thread, so times are the caller's times
    raise_error = False

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        super().__init__()
        self._clock = clock
        self._origin = clock()
        self._lock = threading.Lock()
        self._open: dict[UUID, float] = {}
        self.model_calls: list[ModelCall] = []
        self.tool_calls: list[ToolCall] = []
        self.approvals: list[Approval] = []

    def now(self) -> float:
        """Seconds since the run started."""
        return self._clock() - self._origin

    @property
    def turn(self) -> int:
        """Index of the latest model call (tool calls belong to it); -1 before the first."""
        with self._lock:
            return len(self.model_calls) + len(self._open) - 1

    # --- model calls ----------------------------------------------------------------------
    def on_chat_model_start(
        self, serialized: dict[str, Any], messages: list[list[Any]], *, run_id: UUID, **_: Any
    ) -> None:
        with self._lock:
            self._open[run_id] = self.now()

    def on_llm_start(
        self, serialized: dict[str, Any], prompts: list[str], *, run_id: UUID, **_: Any
    ) -> None:
        with self._lock:
            self._open[run_id] = self.now()

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **_: Any) -> None:
        end = self.now()
        usage = usage_of(response)
        asked = _asked_tool(response)
        with self._lock:
            start = self._open.pop(run_id, end)
            self.model_calls.append(
                ModelCall(
                    start=start,
                    end=end,
                    input_tokens=usage[0],
                    output_tokens=usage[1],
                    total_tokens=usage[2],
                    usage_reported=usage[2] > 0,
                    asked_tool=asked,
                )
            )

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **_: Any) -> None:
        end = self.now()
        tokens = error_usage(error)
        with self._lock:
            start = self._open.pop(run_id, end)
            self.model_calls.append(
                ModelCall(
                    start=start,
                    end=end,
                    input_tokens=tokens[0],
                    output_tokens=tokens[1],
                    total_tokens=tokens[2],
                    usage_reported=tokens[2] > 0,
                    error=repr(error)[:300],
                )
            )

    # --- tool calls -----------------------------------------------------------------------
    def add_tool_call(self, call: ToolCall) -> None:
        with self._lock:
            self.tool_calls.append(call)

    def add_approval(self, tool: str, arguments: Any, *, approved: bool, valid: bool) -> None:
        """The operator answered a write proposed by the latest model call."""
        approval = Approval(
            tool=tool,
            arguments=_plain(arguments),
            approved=approved,
            valid=valid,
            turn=max(self.turn, 0),
        )
        with self._lock:
            self.approvals.append(approval)

    # --- the record -----------------------------------------------------------------------
    def record(
        self, *, agent: str, scenario_id: str, category: str, trial: int, outcome: Outcome
    ) -> RunRecord:
        """The run's record; call when the agent has returned."""
        wall = self.now()
        with self._lock:
            calls = sorted(self.model_calls, key=lambda c: c.start)
            tools = list(self.tool_calls)
            approvals = list(self.approvals)
        return RunRecord(
            agent=agent,
            scenario_id=scenario_id,
            category=category,
            trial=trial,
            answer=outcome.answer,
            termination=outcome.termination,
            termination_reason=outcome.reason,
            termination_cause=outcome.cause,
            wall_s=wall,
            model_calls=calls,
            tool_calls=tools,
            approvals=approvals,
        )


def usage_of(response: LLMResult) -> tuple[int, int, int]:
    """(input, output, total) tokens as the server reported them; zeros when it did not."""
    for generations in response.generations:
        for generation in generations:
            if isinstance(generation, ChatGeneration):
                meta = getattr(generation.message, "usage_metadata", None)
                if meta and meta.get("total_tokens"):
                    return meta["input_tokens"], meta["output_tokens"], meta["total_tokens"]
    token_usage = (response.llm_output or {}).get("token_usage") or {}
    if token_usage.get("total_tokens"):
        return (
            int(token_usage.get("prompt_tokens", 0)),
            int(token_usage.get("completion_tokens", 0)),
            int(token_usage["total_tokens"]),
        )
    return 0, 0, 0


def error_usage(error: BaseException) -> tuple[int, int, int]:
    """Tokens a failed call still spent: a reply cut by max_tokens under a JSON schema fails
    to parse (openai's LengthFinishReasonError), but the server billed it and said so."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        usage = getattr(getattr(current, "completion", None), "usage", None)
        if usage is not None and (getattr(usage, "total_tokens", None) or 0) > 0:
            return usage.prompt_tokens, usage.completion_tokens, usage.total_tokens
        current = current.__cause__ or current.__context__
    return 0, 0, 0


def _asked_tool(response: LLMResult) -> bool:
    """The reply tried to call a tool: tool calls (even unparsable ones), an Action line, or
    a JSON action naming a tool."""
    for generations in response.generations:
        for generation in generations:
            message = getattr(generation, "message", None)
            if isinstance(message, AIMessage) and (
                message.tool_calls or message.invalid_tool_calls
            ):
                return True
            text = generation.text or ""
            if _ACTION_LINE.search(text) or _JSON_CALL.search(text):
                return True
    return False


class RecordingRegistry(ToolRegistry):
    """The world's tools, with every call timed, recorded and (optionally) announced.

    Behaves exactly like the registry it copies: same tools, same validation, same envelopes,
    except that ``meta.latency_s`` is always 0.0 (:func:`stopped_clock`; the call is timed in
    its :class:`ToolCall` instead), and that a call made with a run id (tether's, a random one
    per run) is made with ``run_id`` instead: the run's stable id, so the idempotency keys and
    payment ids write tools derive from it are the same in every identical run (one run, one
    id, as before). ``listener`` hears each finished call; the simulator uses it to learn what
    the world answered, the same way for every agent.
    """

    def __init__(
        self,
        tools: list[BaseTool],
        recorder: RunRecorder,
        *,
        listener: ToolListener | None = None,
        run_id: str | None = None,
    ) -> None:
        super().__init__(tools, clock=stopped_clock)
        self.recorder = recorder
        self.listener = listener
        self.run_id = run_id

    @classmethod
    def wrap(
        cls,
        registry: ToolRegistry,
        recorder: RunRecorder,
        listener: ToolListener | None = None,
        *,
        run_id: str | None = None,
    ) -> RecordingRegistry:
        return cls(registry.tools(), recorder, listener=listener, run_id=run_id)

    def invoke(
        self, name: str, args: Mapping[str, Any] | None, config: RunnableConfig | None = None
    ) -> Envelope:
        turn = self.recorder.turn
        start = self.recorder.now()
        result = super().invoke(name, args, self._stable(config))
        end = self.recorder.now()
        call = ToolCall(
            tool=name,
            arguments=_plain(args),
            status=result["status"],
            error_type=result["meta"].get("error_type"),
            start=start,
            end=end,
            turn=max(turn, 0),
            result=_plain(result.get("data")) if result["status"] == "success" else None,
        )
        self.recorder.add_tool_call(call)
        if self.listener is not None:
            self.listener(call)
        return result

    def _stable(self, config: RunnableConfig | None) -> RunnableConfig | None:
        """``config`` with the run's stable id where it carries a run id."""
        configurable = (config or {}).get("configurable") or {}
        if self.run_id is None or config is None or RUN_ID_KEY not in configurable:
            return config
        return {**config, "configurable": {**configurable, RUN_ID_KEY: self.run_id}}


def _plain(args: Any) -> Any:
    """Arguments in a JSON-safe form for the record."""
    if isinstance(args, Mapping):
        return {str(k): _plain(v) for k, v in args.items()}
    if isinstance(args, list | tuple):
        return [_plain(v) for v in args]
    if args is None or isinstance(args, str | int | float | bool):
        return args
    return str(args)
