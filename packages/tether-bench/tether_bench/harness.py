"""The harness every agent variant runs in, and the table of what each one effectively gets.

The numbers that decide a run's fate without being the framework's own idea are set once,
here, and given to every agent: the step cap (model calls; the seed's 10), the token budget,
and the policy for transient tool failures (attempts and backoff). Where a framework has its
own knob for one of them (tether's settings, create_agent's middleware) the knob is set from
these numbers; where it has none (AgentExecutor has no retry or token budget) the harness
supplies it around the tools or the model. :func:`effective_settings` lists the result per
variant, so a reader (and a test) can see that they match where they must.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import LLMResult
from langchain_tether.budget import schema_text
from tether import AgentSettings, TetherError
from tether.memory import MESSAGE_OVERHEAD, TiktokenCounter, count_messages, tool_call_text

_DEFAULTS = AgentSettings.model_fields


@dataclass(frozen=True)
class Harness:
    """What every agent gets the same. Defaults: tether's own defaults (the seed's cap)."""

    step_cap: int = int(_DEFAULTS["max_steps"].get_default())
    token_budget: int = int(_DEFAULTS["token_budget"].get_default())
    tool_attempts: int = int(_DEFAULTS["tool_attempts"].get_default())
    retry_initial_delay: float = float(_DEFAULTS["retry_base_delay"].get_default())
    retry_backoff: float = 2.0
    retry_max_delay: float = float(_DEFAULTS["retry_max_delay"].get_default())
    model_client_retries: int = 1

    def delay(self, attempt: int) -> float:
        """Backoff before retry ``attempt`` (1-based), without jitter."""
        return min(
            self.retry_max_delay, self.retry_initial_delay * self.retry_backoff ** (attempt - 1)
        )

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class BudgetExceeded(TetherError):
    """The run spent more tokens than the harness allows (ends the run as ``partial``)."""


class _QuietBudgetStops(logging.Filter):
    """LangChain logs a warning for every exception a callback raises, then re-raises it;
    a budget stop is an expected ending, recorded as ``partial``, not a warning."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not any(
            isinstance(a, str) and a == TokenBudgetGuard.__name__ for a in record.args or ()
        )


logging.getLogger("langchain_core.callbacks.manager").addFilter(_QuietBudgetStops())


class TokenBudgetGuard(BaseCallbackHandler):
    """The token budget for a framework without one, with tether's mechanic: checked before
    each model call, per user message.

    Before a call, the request is counted as tether's budget counts one (each message, the
    tool calls' arguments, the tool schemas' JSON; tiktoken offline) and the call is not made
    when what the message has spent, that prompt and ``reserve`` (the call's completion cap,
    which tether keeps for its last answer) would cross the budget: the same arithmetic as
    tether's :func:`tether.decisions.before_call`. After a call, a total over the budget (an
    estimate that fell short) stops the run too. :meth:`new_message` starts a user message's
    budget, as each tether run on a thread starts its own.

    The exception can be caught on its way out (create_agent's ModelRetryMiddleware retries
    it, then hands its text to the agent as the model's reply), so the guard also keeps the
    first stop in :attr:`fired`: the harness decides the run's ending from that, not from
    what the framework made of the exception, and refuses every later call of the message.
    """

    raise_error = True
    run_inline = True

    def __init__(self, budget: int, reserve: int = 0) -> None:
        super().__init__()
        self.budget = budget
        self.reserve = reserve
        self.spent = 0
        self.fired: BudgetExceeded | None = None
        """The first stop this guard raised in the message, or None while within the budget."""

    def new_message(self) -> None:
        """A user message starts: nothing spent on it, no stop yet."""
        self.spent, self.fired = 0, None

    def on_chat_model_start(
        self, serialized: Any, messages: list[list[BaseMessage]], **kwargs: Any
    ) -> None:
        """Refuse a call after the budget stop (a framework that caught the stop and calls
        again, a retry middleware, spends nothing more than one that did not), and a call
        whose prompt and reserve would cross the budget."""
        if self.fired is not None:
            raise self.fired
        params = kwargs.get("invocation_params") or {}
        prompt = request_tokens([m for batch in messages for m in batch], params.get("tools"))
        if self.spent + prompt + self.reserve > self.budget:
            kept = f", keeping ~{self.reserve} for its reply" if self.reserve else ""
            self.fired = BudgetExceeded(
                f"token budget {self.budget} would be exceeded: spent {self.spent}, "
                f"next prompt ~{prompt} tokens{kept}"
            )
            raise self.fired

    def on_llm_end(self, response: LLMResult, **_: Any) -> None:
        from tether_bench.instrument import usage_of

        self.spent += usage_of(response)[2]
        if self.spent > self.budget:
            stop = BudgetExceeded(f"token budget {self.budget} exceeded: spent {self.spent}")
            if self.fired is None:
                self.fired = stop
            raise stop


def request_tokens(messages: list[BaseMessage], tools: list[Any] | None = None) -> int:
    """A chat request's prompt as tether's budget counts one (langchain_tether's
    ``TokenBudgetMiddleware.request_tokens``): each message, the tool calls' arguments and
    each tool schema's JSON as the model is sent it."""
    counter = TiktokenCounter()
    calls = " ".join(tool_call_text(m) for m in messages if isinstance(m, AIMessage))
    schemas = sum(counter.count(schema_text(t)) for t in tools or ())
    overhead = MESSAGE_OVERHEAD if tools else 0
    return count_messages(counter, messages) + counter.count(calls) + schemas + overhead


@dataclass(frozen=True)
class VariantSettings:
    """One agent variant's effective settings, as it runs in the harness."""

    agent: str
    step_cap: int
    step_cap_by: str
    token_budget: int
    token_budget_by: str
    tool_attempts: int
    retry_delays_s: tuple[float, ...]
    retry_by: str
    output_repair: str
    model_call_retries: str
    tool_call_limit: int | None


def effective_settings(harness: Harness | None = None) -> list[VariantSettings]:
    """Each variant's settings, read back from the objects the variants actually build."""
    from tether_bench.agents import VARIANTS, make_agent

    harness = harness or Harness()
    return [make_agent(name, harness).settings() for name in VARIANTS]


def settings_table(harness: Harness | None = None) -> str:
    """The markdown table of :func:`effective_settings` (docs/benchmark.md shows it)."""
    rows = effective_settings(harness)
    header = [
        "Agent",
        "Step cap",
        "Token budget",
        "Transient tool retry",
        "Output repair",
        "Model-call retries",
        "Tool-call limit",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        delays = ", ".join(f"{d:g}" for d in r.retry_delays_s) or "-"
        cells = [
            r.agent,
            f"{r.step_cap} ({r.step_cap_by})",
            f"{r.token_budget:,} ({r.token_budget_by})",
            f"{r.tool_attempts} attempts, waits {delays} s ({r.retry_by})",
            r.output_repair,
            r.model_call_retries,
            "-" if r.tool_call_limit is None else str(r.tool_call_limit),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(settings_table(), end="")
