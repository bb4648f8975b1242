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
from langchain_core.outputs import LLMResult
from tether import AgentSettings, TetherError

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
    """Stops a framework without a token budget once the server-reported total exceeds it.

    Checked after each model call, like tether's own after-call check (tether also stops
    before a call whose prompt alone would cross the budget, which this guard cannot see).

    The exception can be caught on its way out (create_agent's ModelRetryMiddleware retries
    it, then hands its text to the agent as the model's reply), so the guard also keeps the
    first stop in :attr:`fired`: the harness decides the run's ending from that, not from
    what the framework made of the exception, and refuses every later call of the run.
    """

    raise_error = True
    run_inline = True

    def __init__(self, budget: int) -> None:
        super().__init__()
        self.budget = budget
        self.spent = 0
        self.fired: BudgetExceeded | None = None
        """The first stop this guard raised in the run, or None while within the budget."""

    def on_chat_model_start(self, *_: Any, **__: Any) -> None:
        """Refuse any model call after the budget stop: a framework that caught the stop and
        calls again (a retry middleware) spends nothing more than one that did not."""
        if self.fired is not None:
            raise self.fired

    def on_llm_end(self, response: LLMResult, **_: Any) -> None:
        from tether_bench.instrument import usage_of

        self.spent += usage_of(response)[2]
        if self.spent > self.budget:
            stop = BudgetExceeded(f"token budget {self.budget} exceeded: spent {self.spent}")
            if self.fired is None:
                self.fired = stop
            raise stop


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
