"""The registry's tools as LangChain tools, so the baselines call exactly what tether calls.

Each :class:`RegistryTool` has the registry tool's name, description and args_schema (what the
model is shown) and its metadata (a write tool's ``side_effects`` mark, which tether's
middleware reads and LangChain's own agents do not), and hands the raw arguments to
``registry.invoke``, which validates them and answers with the same envelope tether sees,
returned as JSON text. LangChain's own argument
validation is bypassed on purpose: otherwise a bad argument would be a LangChain exception for
the baselines and an envelope for tether, and tool behaviour would differ.

Transient failures are retried in place when the harness says so (``attempts`` > 1), with the
harness's backoff and full jitter, the policy tether applies itself; a framework with its own
retry (create_agent's ToolRetryMiddleware) gets ``attempts=1`` and ``raise_transient``.

A framework without approval gates (AgentExecutor) gets them here: given a ``desk``, a write
tool asks the operator before it runs, and a rejection comes back as an error envelope that
says so (the call never reaches the registry).
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from typing import Any

from langchain_core.runnables.config import ensure_config
from langchain_core.tools import BaseTool
from tether import ToolRegistry, TransientToolError
from tether.tools import Envelope, error_envelope

from tether_bench.gates import ApprovalDesk
from tether_bench.harness import Harness

BAD_INPUT_HELP = (
    "Action Input must be one JSON object with double-quoted keys and strings, "
    'e.g. {"order_id": "ORD-2024-001"}.'
)


class RegistryTool(BaseTool):
    """One registry tool. ``text_input``: the input is a ReAct Action Input string to decode
    with ``json.loads``; ``raise_transient``: a transient error envelope left after the
    attempts is raised as :class:`TransientToolError` so a retry middleware can retry it."""

    registry: ToolRegistry
    text_input: bool = False
    raise_transient: bool = False
    harness: Harness = Harness()
    attempts: int = 1
    sleep: Callable[[float], None] = time.sleep
    rng: random.Random = random.Random(0)
    desk: ApprovalDesk | None = None

    def _to_args_and_kwargs(
        self, tool_input: str | dict[str, Any], tool_call_id: str | None
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (tool_input,), {}

    def _run(self, tool_input: Any) -> str:
        if isinstance(tool_input, str):
            parsed = _decode(tool_input) if self.text_input else None
            if parsed is None:
                return _dump(
                    error_envelope(
                        f"{self.name}: could not read the Action Input as JSON. {BAD_INPUT_HELP}",
                        error_type="validation_error",
                    )
                )
            tool_input = parsed
        if rejected := self._rejection(tool_input):
            return _dump(rejected)
        config = ensure_config()  # the run's (a middleware's run id too): the registry's to see
        result = self.registry.invoke(self.name, tool_input, config)
        for attempt in range(1, self.attempts):
            if not _transient(result):
                break
            self.sleep(self.rng.uniform(0, self.harness.delay(attempt)))
            result = self.registry.invoke(self.name, tool_input, config)
        if self.raise_transient and _transient(result):
            raise TransientToolError(result.get("message", "transient failure"))
        return _dump(result)

    def _rejection(self, arguments: Any) -> Envelope | None:
        """The operator's rejection of this write, or None to run it (reads are not gated)."""
        if self.desk is None or not self.desk.gated(self.name):
            return None
        decision = self.desk.decide(self.name, arguments)
        if decision["type"] == "approve":
            return None
        reason = decision.get("message", "")
        return error_envelope(f"The operator rejected this call: {reason}", error_type="rejected")


def _transient(result: Envelope) -> bool:
    return result["status"] == "error" and bool(result["meta"].get("transient"))


def _decode(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text.strip())
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _dump(result: Envelope) -> str:
    return json.dumps(result, ensure_ascii=False, default=str)


def registry_tools(
    registry: ToolRegistry,
    *,
    text_input: bool = False,
    raise_transient: bool = False,
    harness: Harness | None = None,
    retry: bool = False,
    sleep: Callable[[float], None] = time.sleep,
    desk: ApprovalDesk | None = None,
) -> list[BaseTool]:
    """Every tool in ``registry``, wrapped; ``retry``: the harness's in-place retry; ``desk``:
    the operator's gate on the write tools."""
    harness = harness or Harness()
    return [
        RegistryTool(
            name=tool.name,
            description=tool.description,
            args_schema=tool.args_schema,
            metadata=tool.metadata,
            registry=registry,
            text_input=text_input,
            raise_transient=raise_transient,
            harness=harness,
            attempts=harness.tool_attempts if retry else 1,
            sleep=sleep,
            rng=random.Random(0),
            desk=desk,
        )
        for tool in registry.tools()
    ]
