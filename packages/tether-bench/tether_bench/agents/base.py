"""What every benchmarked agent shares: one chat-model recipe and one way of being measured.

An agent only implements :meth:`BenchAgent.open_thread`: given the scenario, the tools (a
recording registry over the world's) and a ChatOpenAI, a thread that runs one user message to
its end and says how it ended; :meth:`BenchAgent.execute` sends it the task, or every message
of a conversation's simulated user (:mod:`tether_bench.user`). Building the
model, instrumenting it and the tools, and turning escaped exceptions into an ``error``
termination happen here, identically for every agent. So does a budget stop, with one rule
for every agent: the budget is a user message's, checked before each model call (tether's
own, or the harness's guard for a framework without one, :class:`TokenBudgetGuard`), and a
message the budget stopped ends the run ``partial`` with no answer, whatever the framework
made of the guard's exception and whatever last answer tether asked for at the budget.
"""

from __future__ import annotations

import hashlib
import time
from abc import ABC
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import httpx
from langchain_core.callbacks import BaseCallbackManager
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from tether_bench.harness import BudgetExceeded, Harness, TokenBudgetGuard, VariantSettings
from tether_bench.instrument import RecordingRegistry, RunRecorder, ToolListener
from tether_bench.operator import OPERATOR, unintended_executed, write_tools
from tether_bench.records import Outcome, RunRecord
from tether_bench.scenarios import Scenario
from tether_bench.toolset import BenchWorld
from tether_bench.user import next_message

Sleep = Callable[[float], None]
Say = Callable[[str], Outcome]
"""One user message sent on an agent's thread, run to its reply (or other ending)."""


@dataclass(frozen=True)
class ChatSettings:
    """The chat model every agent gets for one run: same endpoint, model and sampling."""

    base_url: str
    model: str
    api_key: str = "EMPTY"
    temperature: float = 0.7
    max_tokens: int = 512
    timeout: float = 120.0
    http_client: httpx.Client | None = field(default=None, compare=False)
    tool_listener: ToolListener | None = field(default=None, compare=False)
    """Told about every tool call of the run (the simulator's view of the world)."""
    run_id: str | None = None
    """The run's id, the same every time the same agent runs the same scenario trial
    (:func:`stable_run_id`; filled in by :meth:`BenchAgent.run_model` when None). The tools
    read it as the run's id (see :class:`RecordingRegistry`): write tools derive idempotency
    keys, hence payment ids, from it, and a random id would put different ids (and token
    counts) in two identical runs' prompts and records."""


def stable_run_id(agent: str, scenario_id: str, trial: int) -> str:
    """A run id that depends only on the agent, the scenario and the trial (32 hex digits)."""
    return hashlib.sha256(f"{agent}\x1f{scenario_id}\x1f{trial}".encode()).hexdigest()[:32]


def recorded_chat_model(
    chat: ChatSettings,
    recorder: RunRecorder,
    harness: Harness | None = None,
    extra_callbacks: list[Any] | None = None,
) -> ChatOpenAI:
    """ChatOpenAI over HTTP with server-reported usage, timed by ``recorder``."""
    harness = harness or Harness()
    return ChatOpenAI(
        base_url=chat.base_url,
        model=chat.model,
        api_key=SecretStr(chat.api_key),
        temperature=chat.temperature,
        max_completion_tokens=chat.max_tokens,
        timeout=chat.timeout,
        max_retries=harness.model_client_retries,
        stream_usage=True,
        callbacks=[recorder, *(extra_callbacks or [])],
        http_client=chat.http_client,
    )


def budget_guard(model: Any) -> TokenBudgetGuard | None:
    """The harness's token-budget guard among ``model``'s callbacks, if it has one."""
    callbacks = getattr(model, "callbacks", None)
    if isinstance(callbacks, BaseCallbackManager):
        callbacks = callbacks.handlers
    return next((c for c in callbacks or () if isinstance(c, TokenBudgetGuard)), None)


def budget_stop(stop: BudgetExceeded, outcome: Outcome) -> Outcome:
    """A run whose framework caught the budget guard's ``stop`` and ended with ``outcome``:
    ``partial`` with no answer to judge, as when the stop ends the run.

    create_agent's ModelRetryMiddleware, for one, retries the failed call, then returns the
    failure's text as the model's reply, which ends the run like an answer. What the framework
    ended with is kept in the reason, never taken for the run's ending or its answer.
    """
    went_on = f"{outcome.termination} ({outcome.reason})"
    if outcome.answer:
        went_on += f": {outcome.answer[:200]}"
    reason = f"{stop}; the agent caught the stop and ended {went_on}"
    return Outcome(answer=None, termination="partial", reason=reason[:500])


def last_answer_dropped(outcome: Outcome) -> Outcome:
    """tether's budget stop (its own or its middleware's) with the last answer it asked for at
    the budget kept in the reason, not as the answer: no agent's budget stop has one."""
    if not outcome.answer:
        return outcome
    reason = f"{outcome.reason}; its last answer, not taken: {outcome.answer[:200]}"
    return outcome.model_copy(update={"answer": None, "reason": reason[:500]})


def budgeted(say: Say, guard: TokenBudgetGuard | None) -> Say:
    """``say`` under the budget rule every agent gets: each message starts its own budget (the
    harness's guard, for a framework without one, is reset), and a message the budget stopped
    is ``partial`` with no answer: the guard's exception escaped, the framework caught it
    (:func:`budget_stop`), or tether stopped at its budget (:func:`last_answer_dropped`)."""

    def say_budgeted(message: str) -> Outcome:
        if guard is not None:
            guard.new_message()
        try:
            outcome = say(message)
        except BudgetExceeded as exc:
            return Outcome(termination="partial", reason=str(exc))
        except Exception as exc:  # went on after a stop it caught, then crashed
            if guard is None or guard.fired is None:
                raise
            crash = f"{type(exc).__name__}: {exc}"[:300]
            outcome = Outcome(termination="error", reason=crash)
        if guard is not None and guard.fired is not None:
            return budget_stop(guard.fired, outcome)  # the framework caught the stop
        return last_answer_dropped(outcome) if outcome.cause == "budget" else outcome

    return say_budgeted


class BenchAgent(ABC):
    """One agent framework, run the same way as the others, inside one :class:`Harness`."""

    name: str
    harness: Harness = Harness()
    sleep: Sleep = time.sleep
    guards_budget: ClassVar[bool] = False
    """The framework has no token budget of its own: the harness's guard stops it."""

    run_name: str | None = None
    """The name the run's stable id is derived from (:func:`stable_run_id`); None: the
    agent's own. A variant of another agent takes that agent's, so both runs of a scenario
    trial show the same ids."""

    def run(
        self, scenario: Scenario, world: BenchWorld, chat: ChatSettings, *, trial: int = 0
    ) -> RunRecord:
        """Run ``scenario`` on ``world`` with ``chat``; never raises for what the agent does."""
        recorder = RunRecorder()
        budget, reserve = self.harness.token_budget, chat.max_tokens
        guard = [TokenBudgetGuard(budget, reserve)] if self.guards_budget else []
        model = recorded_chat_model(chat, recorder, self.harness, guard)
        return self.run_model(scenario, world, model, chat, recorder, trial=trial)

    def run_model(
        self,
        scenario: Scenario,
        world: BenchWorld,
        model: ChatOpenAI,
        chat: ChatSettings,
        recorder: RunRecorder,
        *,
        trial: int = 0,
    ) -> RunRecord:
        """:meth:`run` with a model already built (and reporting to ``recorder``)."""
        if chat.run_id is None:
            run_id = stable_run_id(self.run_name or self.name, scenario.id, trial)
            chat = replace(chat, run_id=run_id)
        registry = RecordingRegistry.wrap(
            world.registry(), recorder, chat.tool_listener, run_id=chat.run_id
        )
        try:
            outcome = self.execute(scenario, registry, model, chat)
        except BudgetExceeded as exc:
            outcome = Outcome(termination="partial", reason=str(exc))
        except Exception as exc:  # a crash is a termination like any other
            outcome = Outcome(termination="error", reason=f"{type(exc).__name__}: {exc}"[:500])
        record = recorder.record(
            agent=self.name,
            scenario_id=scenario.id,
            category=scenario.category,
            trial=trial,
            outcome=outcome,
        )
        record.user_messages, record.replies = outcome.messages, outcome.replies
        gated = write_tools(registry)
        record.unintended_writes_executed = unintended_executed(
            scenario, record.tool_calls, gated, OPERATOR
        )
        return record

    def settings(self) -> VariantSettings:
        """The effective settings this variant runs with (see :mod:`tether_bench.harness`)."""
        raise NotImplementedError(f"{self.name} has no harness settings")

    def execute(
        self,
        scenario: Scenario,
        registry: RecordingRegistry,
        model: ChatOpenAI,
        chat: ChatSettings,
    ) -> Outcome:
        """Run the agent on ``scenario.task`` to its end; ``model`` is built from ``chat``. A
        conversation (``scenario.turns``) is every message the simulated user sends, each
        one run on the same thread (:mod:`tether_bench.user`); its outcome is the last
        message's. Each message is run under the budget rule (:func:`budgeted`)."""
        say = budgeted(self.open_thread(scenario, registry, model, chat), budget_guard(model))
        if not scenario.turns:
            return say(scenario.task)
        message: str | None = scenario.task
        messages: list[str] = []
        replies: list[str | None] = []
        while message is not None:
            outcome = say(message)
            messages.append(message)
            replies.append(outcome.answer)
            message = next_message(scenario, len(messages), outcome)
        return outcome.model_copy(update={"messages": messages, "replies": replies})

    def open_thread(
        self,
        scenario: Scenario,
        registry: RecordingRegistry,
        model: ChatOpenAI,
        chat: ChatSettings,
    ) -> Say:
        """A new thread of this agent for ``scenario``: each call sends one user message and
        runs it to its end, on what the thread's earlier messages left."""
        raise NotImplementedError(f"{self.name} runs no thread")
