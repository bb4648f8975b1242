"""tether as benchmarked: the graph with default settings on the world's registry.

Only what every agent shares is set: endpoint, model, temperature, completion cap, timeout,
and the harness's step cap, token budget and transient-retry policy (tether's own defaults,
so nothing changes unless the harness does). Approval gates are on for the world's write
tools, as for every agent: the run pauses on tether's own gate and the harness resumes it with
the operator's decision (:mod:`tether_bench.gates`). tether draws a random run id, which its
write tools derive idempotency keys (and so payment ids) from; the recording registry shows
the tools the harness's stable one instead (:class:`~tether_bench.instrument.RecordingRegistry`),
so those ids are the same in every identical run.
"""

from __future__ import annotations

import copy
from collections.abc import Collection
from typing import Any

from langchain_openai import ChatOpenAI
from tether import AgentSettings, StopCause, build_graph, load_settings

from tether_bench.agents.base import BenchAgent, ChatSettings, Say, Sleep
from tether_bench.gates import ApprovalDesk, new_thread, run_gated
from tether_bench.harness import Harness, VariantSettings
from tether_bench.instrument import RecordingRegistry
from tether_bench.records import Outcome, TerminationKind
from tether_bench.scenarios import Scenario

TERMINATIONS: dict[StopCause, TerminationKind] = {
    "answer": "completed",
    "step_cap": "max_steps",
    "budget": "partial",
    "breaker": "failed",
    "tool_failures": "failed",
    "unsettled": "failed",
    "unbacked": "failed",  # the small-model profile: an answer stating nothing the run found
    "rule": "failed",  # the benchmark sets no rule: a rule's stop is a stop that failed
    "repeat": "no_progress",
    "same_reply": "no_progress",
    # the harness never cancels (no cancel store): a cancelled run was stopped from outside
    # the benchmark, which is no termination of the agent's own
    "cancel": "error",
}
"""How each of tether's stop causes counts in the benchmark: every cause (a test checks), so
a new one cannot fall into "error" unseen. Keyed on the cause, never the status."""


def outcome_of(state: dict[str, Any]) -> Outcome:
    """A final state's outcome, by its stop cause. A run with no cause this tether has (still
    running, or from another version) is an error that names what it had, never passed off
    as a known ending."""
    cause, status = state.get("cause"), state.get("status")
    reason = str(state.get("reason", "") or "")
    if cause not in TERMINATIONS:
        reason = f"tether has no stop cause {cause!r} (status {status!r}): {reason}"
        return Outcome(answer=state.get("answer"), termination="error", reason=reason)
    return Outcome(
        answer=state.get("answer"), termination=TERMINATIONS[cause], reason=reason, cause=cause
    )


def tether_settings(
    *,
    base_url: str,
    model: str,
    temperature: float,
    max_tokens: int,
    timeout: float,
    harness: Harness | None = None,
    protocol: str | None = None,
    approval_tools: Collection[str] = (),
    small_model: bool | None = None,
    instructions: str | None = None,
) -> AgentSettings:
    """Default AgentSettings with the shared chat parameters, the harness, approval gates on
    exactly ``approval_tools`` (named, so no environment setting can change the set),
    ``small_model`` switching the small-model profile on (a URL is never the embedded model,
    so it is off by default), and the scenario's domain policy as ``instructions``."""
    h = harness or Harness()
    values: dict[str, Any] = {
        "base_url": base_url,
        "model": model,
        "temperature": temperature,
        "max_tokens": max_tokens,
        "request_timeout": timeout,
        "max_steps": h.step_cap,
        "token_budget": h.token_budget,
        "tool_attempts": h.tool_attempts,
        "retry_base_delay": h.retry_initial_delay,
        "retry_max_delay": h.retry_max_delay,
    }
    if protocol is not None:
        values["protocol"] = protocol
    values["approval_tools"] = sorted(approval_tools)
    if small_model is not None:
        values["small_model"] = small_model
    if instructions:
        values["instructions"] = instructions
    return load_settings(**values)


class TetherAgent(BenchAgent):
    """tether's loop: budgets, breaker, retries in place, repair of the model's output."""

    name = "tether"

    def __init__(
        self,
        *,
        harness: Harness | None = None,
        sleep: Sleep | None = None,
        seed: int = 0,
        protocol: str | None = None,
        small_model: bool | None = None,
    ) -> None:
        self.harness = harness or Harness()
        self.small_model = small_model
        if sleep is not None:
            self.sleep = sleep
        self.seed = seed
        self.protocol = protocol
        self.ablated: tuple[str, ...] = ()
        """Controls switched off (:mod:`tether_bench.ablation`); empty: tether as it is."""

    def without(self, control: str) -> TetherAgent:
        """This agent with ``control`` switched off too, named after it
        (``tether-no_breaker``); its runs keep this agent's run ids, so both meet the same
        tool ids."""
        from tether_bench.ablation import CONTROLS, variant_name

        if control not in CONTROLS:
            raise ValueError(f"unknown control {control!r}; known: {', '.join(CONTROLS)}")
        variant = copy.copy(self)
        variant.name = variant_name(self.name, control)
        variant.run_name = self.run_name or self.name
        variant.ablated = (*self.ablated, control)
        return variant

    def settings_at(
        self,
        *,
        base_url: str = "http://127.0.0.1:1/v1",
        model: str = "m",
        temperature: float = 0.0,
        max_tokens: int = 1,
        timeout: float = 1.0,
        approval_tools: Collection[str] = (),
        instructions: str | None = None,
    ) -> AgentSettings:
        """The AgentSettings this agent runs with on that endpoint and sampling: the harness's
        numbers, the profile, the scenario's policy, and its ablated controls off."""
        from tether_bench.ablation import switch_off

        settings = tether_settings(
            base_url=base_url,
            model=model,
            temperature=temperature,
            max_tokens=max_tokens,
            timeout=timeout,
            harness=self.harness,
            protocol=self.protocol,
            approval_tools=approval_tools,
            small_model=self.small_model,
            instructions=instructions,
        )
        return switch_off(settings, self.ablated) if self.ablated else settings

    def settings(self) -> VariantSettings:
        s = self.settings_at()
        ceiling = [
            min(s.retry_max_delay, s.retry_base_delay * 2 ** (a - 1))
            for a in range(1, s.tool_attempts)
        ]
        return VariantSettings(
            agent=self.name,
            step_cap=s.max_steps,
            step_cap_by="max_steps",
            token_budget=s.token_budget,
            token_budget_by="token_budget",
            tool_attempts=s.tool_attempts,
            retry_delays_s=tuple(ceiling),
            retry_by="tether (full jitter)",
            output_repair=f"tether parser ({s.protocol_name})",
            model_call_retries=f"client {self.harness.model_client_retries}",
            tool_call_limit=None,
        )

    def open_thread(
        self,
        scenario: Scenario,
        registry: RecordingRegistry,
        model: ChatOpenAI,
        chat: ChatSettings,
    ) -> Say:
        """One thread of tether's graph: each user message is a run on it (``{"task": ...}``,
        as tether takes a conversation's next message)."""
        desk = ApprovalDesk(scenario, registry)
        settings = self.settings_at(
            base_url=chat.base_url,
            model=chat.model,
            temperature=chat.temperature,
            max_tokens=chat.max_tokens,
            timeout=chat.timeout,
            approval_tools=desk.tools,
            instructions=scenario.instructions,
        )
        checkpointer, config = new_thread()
        graph = build_graph(
            settings,
            model=model,
            registry=registry,
            checkpointer=checkpointer,
            sleep=self.sleep,
            seed=self.seed,
        )
        return lambda message: outcome_of(run_gated(graph, {"task": message}, config, desk))


class TetherSmallAgent(TetherAgent):
    """tether with the small-model profile on, as it runs on the embedded model."""

    name = "tether_small"

    def __init__(self, *, harness: Harness | None = None, protocol: str | None = None) -> None:
        super().__init__(harness=harness, protocol=protocol, small_model=True)
