"""The stop rules: one ordered list of pure functions, each over a typed view of the facts
it reads. The loop and the create_agent middleware both build a :class:`StopFacts` after
each step and ask :func:`first_stop`; the first rule that answers ends the run, with its
:data:`~tether.vocabulary.StopCause`.

Adding a rule is one function here, its entry in :data:`STOP_RULES` and its setting
(docs/architecture.md, "Add a stop rule").
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

from tether.settings import AgentSettings
from tether.state import StepRecord, Usage, Verdict
from tether.vocabulary import CAUSES, FAILURE_KINDS, Status, StopCause


@dataclass(frozen=True)
class StopFacts:
    """What the stop rules may read after a step, as either face counts it."""

    steps: int
    """Model calls made in this run."""
    history: Sequence[StepRecord]
    """The run's last step records, oldest first; the step just made is the last."""
    failure_streak: int
    """Failed steps in a row, the last one included."""
    usage: Usage | None = None
    """Tokens the run has spent."""
    tool_failures: Mapping[str, int] = field(default_factory=dict)
    """Failed calls of each registered tool over the run."""

    @classmethod
    def of_calls(
        cls,
        steps: int,
        records: Sequence[StepRecord],
        usage: Usage | None = None,
        tool_failures: Mapping[str, int] | None = None,
    ) -> StopFacts:
        """The facts from call records where a reply's parallel calls share a step (the
        create_agent middleware's): each step is its last failure when every call failed,
        else its last call that did not fail, and the failure streak is counted from them."""
        history = by_step(records)
        failures = dict(tool_failures or {})
        return cls(steps, history, streak(history, FAILURE_KINDS), usage, failures)


StopRule = Callable[[StopFacts, AgentSettings], Verdict | None]
"""A stop rule: the verdict that ends the run, or None to go on."""


def stop(status: Status, cause: StopCause, reason: str) -> Verdict:
    """A verdict that ends the run at once."""
    return {"status": status, "cause": cause, "reason": reason}


def cap(status: Status, cause: StopCause, reason: str) -> Verdict:
    """A verdict that ends the run after one last call, with no tools, asks the model for its
    answer (``cap_answer``), telling it why in the cause's words."""
    return {"status": status, "cause": cause, "reason": reason, "cap": True}


def answered(facts: StopFacts, settings: AgentSettings) -> Verdict | None:
    """The model gave its final answer (and the check took it); one the model profile found
    to state nothing the run found (``unbacked``) ends it ``failed``, the answer dropped."""
    last = facts.history[-1]
    if last["kind"] != "final":
        return None
    if last.get("unbacked"):
        return stop("failed", "unbacked", CAUSES["unbacked"])
    return stop("completed", "answer", f"final answer after {facts.steps} step(s)")


def repeated(facts: StopFacts, settings: AgentSettings) -> Verdict | None:
    """A call proposed again after the notes said one more proposal ends the run."""
    last = facts.history[-1]
    return stop("no_progress", "repeat", last["summary"]) if last["kind"] == "repeat" else None


def same_replies(facts: StopFacts, settings: AgentSettings) -> Verdict | None:
    """The same unusable reply three times in a row, the last after a note said so."""
    if not same_reply(facts.history, 3):
        return None
    why = "the same unusable reply three times in a row, the last after a note"
    return stop("no_progress", "same_reply", f"{why}: {facts.history[-1]['summary']}")


def breaker(facts: StopFacts, settings: AgentSettings) -> Verdict | None:
    """``breaker_failures`` consecutive failed steps put the run on notice (the note after the
    last of them says so); one more opens the circuit, listing each."""
    streak = facts.failure_streak
    if streak <= settings.breaker_failures:
        return None
    failed = facts.history[-streak:]
    listed = "; ".join(f"step {r['step']} {r['kind']}: {r['summary']}" for r in failed)
    return cap(
        "failed", "breaker", f"circuit breaker: {streak} consecutive failed steps ({listed})"
    )


def one_tool_failing(facts: StopFacts, settings: AgentSettings) -> Verdict | None:
    """One tool has failed ``max_tool_failures`` times in this run, in a row or not (off when
    unset): a tool that keeps failing between successes never trips the breaker."""
    limit = settings.max_tool_failures
    failing = [(n, tool) for tool, n in facts.tool_failures.items() if n >= (limit or 0)]
    if limit is None or not failing:
        return None
    count, tool = max(failing)
    why = f"{tool} failed {count} times in this run (max_tool_failures={limit})"
    return cap("failed", "tool_failures", why)


def over_budget(facts: StopFacts, settings: AgentSettings) -> Verdict | None:
    """The run has spent more than ``token_budget`` (checked before each call too)."""
    usage = facts.usage
    if usage is None or usage["total_tokens"] <= settings.token_budget:
        return None
    spent = f"{usage['total_tokens']} ({usage['input_tokens']} in, {usage['output_tokens']} out)"
    return cap("partial", "budget", f"token budget {settings.token_budget} exceeded: spent {spent}")


def step_cap(facts: StopFacts, settings: AgentSettings) -> Verdict | None:
    """``max_steps`` model calls without a final answer."""
    if facts.steps < settings.max_steps:
        return None
    why = f"step cap reached: {settings.max_steps} model calls without a final answer"
    return cap("max_steps", "step_cap", why)


STOP_RULES: tuple[StopRule, ...] = (
    answered,
    repeated,
    same_replies,
    breaker,
    one_tool_failing,
    over_budget,
    step_cap,
)
"""Every stop rule, in the order they are asked: the first verdict ends the run."""


def first_stop(facts: StopFacts, settings: AgentSettings) -> Verdict | None:
    """The verdict of the first rule of :data:`STOP_RULES` that stops the run, if any."""
    for rule in STOP_RULES:
        if (verdict := rule(facts, settings)) is not None:
            return verdict
    return None


def by_step(records: Sequence[StepRecord]) -> list[StepRecord]:
    """One record per step: its last failure when every call failed, else its last call
    that did not fail."""
    steps: list[StepRecord] = []
    for record in records:
        if not steps or steps[-1]["step"] != record["step"]:
            steps.append(record)
        elif record["kind"] not in FAILURE_KINDS or steps[-1]["kind"] in FAILURE_KINDS:
            steps[-1] = record
    return steps


def streak(steps: Sequence[StepRecord], kinds: Collection[str]) -> int:
    """How many of the last steps in a row are of ``kinds``."""
    count = 0
    for record in reversed(steps):
        if record["kind"] not in kinds:
            break
        count += 1
    return count


def same_reply(history: Sequence[StepRecord], times: int) -> bool:
    """The last ``times`` replies were the same unusable one (the design note's loop of one
    Thought with no Action): at two a note says so, at three the run ends."""
    if len(history) < times:
        return False
    last = history[-times:]
    first = last[0]["fingerprint"]
    return first is not None and all(
        r["kind"] == "parse_failure" and r["fingerprint"] == first for r in last
    )
