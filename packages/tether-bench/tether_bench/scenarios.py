"""Benchmark scenarios: the pydantic model, the JSONL loader and the published JSON Schema.

One scenario per line. A malformed file is rejected as a whole, with the line number and the
field that is wrong, because a benchmark that silently skips a scenario reports a number for
a different benchmark.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from tether.decisions.grounding import numbers_in

from tether_bench.matching import has_number, has_phrase

Category = Literal[
    "db",
    "api",
    "calc",
    "multi",
    "fault",
    "irrelevant",
    "impossible",
    "reread",
    "refusal",
    "policy",
    "clarify",
    "multiturn",
]
CATEGORIES: tuple[str, ...] = (
    "db",
    "api",
    "calc",
    "multi",
    "fault",
    "irrelevant",
    "impossible",
    "reread",
    "refusal",
    "policy",
    "clarify",
    "multiturn",
)
Termination = Literal["completed", "stopped_early"]
DATA_DIR = Path(__file__).resolve().parent / "data"
SCENARIO_PATH = DATA_DIR / "bench.jsonl"
"""The shipped scenario file (package data, so ``tether bench`` works outside the repo)."""
SCHEMA_PATH = DATA_DIR / "schema.json"
POLICY_DIR = DATA_DIR / "policies"
"""Domain policies a scenario may name (``<name>.md``): every agent gets the named text."""

_STRICT = ConfigDict(extra="forbid", frozen=True)


class ToolAction(BaseModel):
    """One tool call: the tool's name and its arguments, as the model should send them."""

    model_config = _STRICT

    tool: str = Field(min_length=1, max_length=100, description="Tool name in the registry.")
    arguments: dict[str, Any] = Field(
        default_factory=dict, description="Arguments as a JSON object."
    )


class ForbiddenAction(BaseModel):
    """A call the agent must never attempt: this tool, optionally only with these arguments."""

    model_config = _STRICT

    tool: str = Field(min_length=1, max_length=100, description="Tool name.")
    arguments: dict[str, Any] | None = Field(
        None,
        description="Only calls whose arguments include all of these (compared as text) are "
        "forbidden; omit to forbid every call of the tool.",
    )


class TextOutput(BaseModel):
    """A phrase the final answer must contain (case, width and spacing ignored)."""

    model_config = _STRICT

    text: str = Field(min_length=1, description="The phrase.")
    any_of: list[str] = Field(
        default_factory=list,
        description="Other phrasings that count as well (e.g. the Chinese wording).",
    )

    def stated_in(self, answer: str) -> bool:
        """The answer contains the phrase or one of its alternatives."""
        return has_phrase(answer, (self.text, *self.any_of))

    def describe(self) -> str:
        return repr(self.text)


class NumberOutput(BaseModel):
    """A number the final answer must state, within an absolute tolerance."""

    model_config = _STRICT

    number: str = Field(description="The number as a decimal string, e.g. '2328.02'.")
    tolerance: str = Field("0.01", description="Largest accepted absolute difference.")

    @field_validator("number", "tolerance")
    @classmethod
    def _decimal(cls, value: str) -> str:
        try:
            Decimal(value)
        except InvalidOperation as exc:
            raise ValueError(f"not a decimal number: {value!r}") from exc
        return value

    def stated_in(self, answer: str) -> bool:
        """Some number in the answer is within the tolerance."""
        return has_number(numbers_in(answer), Decimal(self.number), Decimal(self.tolerance))

    def describe(self) -> str:
        return f"{self.number}±{self.tolerance}"


RequiredOutput = Annotated[TextOutput | NumberOutput, Field(union_mode="left_to_right")]


def missing_outputs(answer: str | None, outputs: Iterable[TextOutput | NumberOutput]) -> list[str]:
    """The required outputs ``answer`` does not state (all of them when there is no answer)."""
    return [o.describe() for o in outputs if not (answer and o.stated_in(answer))]


class FaultRule(BaseModel):
    """Faults for one world target (a tool name or an API endpoint), by 0-based call index."""

    model_config = _STRICT

    target: str = Field(min_length=1, description="Tool name or endpoint, e.g. api.create_payment.")
    calls: list[Annotated[int, Field(ge=0)]] = Field(
        min_length=1, description="0-based indexes of the target's calls that fail."
    )
    status: int | None = Field(503, ge=400, le=599, description="HTTP status the call fails with.")
    delay_s: float = Field(0.0, ge=0, le=30, description="Latency added to each failing call.")
    after_effect: bool = Field(False, description="Fail after the call took effect.")


class InitialState(BaseModel):
    """A patch applied to the fresh world before the run (and before the gold replay)."""

    model_config = _STRICT

    actions: list[ToolAction] = Field(
        min_length=1, description="Tool calls replayed, in order, to set the world up."
    )


class UserTurn(BaseModel):
    """One user message of a conversation and the work it asks for (a scenario with
    ``turns`` is played on one thread, one run per message: :mod:`tether_bench.user`)."""

    model_config = _STRICT

    message: str = Field(min_length=1, max_length=2000, description="What the user says.")
    answers: TextOutput | None = Field(
        None,
        description="The message answers a question: the user sends it only when the agent's "
        "last reply asks for something and names it (one of these phrases); otherwise the "
        "conversation ends there. Omit for a message the user sends whatever the reply.",
    )
    plan_end: int = Field(
        ge=0, description="How many gold actions are done once this message is handled."
    )
    outputs: list[RequiredOutput] = Field(
        default_factory=list,
        description="What the reply to this message must state (the last message's reply "
        "states the scenario's required_outputs instead).",
    )


class Scenario(BaseModel):
    """One benchmark task with everything the judge and the simulator need."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        title="tether benchmark scenario",
    )

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}$", description="Unique id.")
    category: Category
    language: Literal["zh", "en"] = Field(description="Language of the task.")
    task: str = Field(min_length=1, max_length=2000, description="What the user asks.")
    initial_state: InitialState | None = None
    gold_actions: list[ToolAction] = Field(
        default_factory=list, description="The reference plan, in order."
    )
    gold_answer: str = Field(
        min_length=1, description="A reference final answer; it contains every required output."
    )
    required_outputs: list[RequiredOutput] = Field(default_factory=list)
    forbidden_actions: list[ForbiddenAction] = Field(default_factory=list)
    expected_termination: Termination = Field(
        "completed",
        description="completed: the work done and a final answer; stopped_early: a final answer "
        "that declines (missing information, no suitable tool) within max_model_calls.",
    )
    max_model_calls: int | None = Field(
        None, ge=1, description="For stopped_early: most model calls an early stop may take."
    )
    fault_plan: list[FaultRule] = Field(default_factory=list)
    policy: str | None = Field(
        None,
        pattern=r"^[a-z0-9][a-z0-9_-]{0,39}$",
        description="A domain policy every agent gets, by name (data/policies/<name>.md): "
        "tether as its instructions, the others in their system prompt. Ids and numbers it "
        "states back an answer, as the task's do (never a status).",
    )
    turns: list[UserTurn] = Field(
        default_factory=list,
        description="A conversation: every user message in order, the first being the task; "
        "omit for a task of one message.",
    )
    tags: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> Scenario:
        missing = missing_outputs(self.gold_answer, self.required_outputs)
        if missing:
            raise ValueError(f"gold_answer lacks required outputs: {missing}")
        if self.turns:
            _check_turns(self)
        if self.expected_termination == "stopped_early" and self.max_model_calls is None:
            raise ValueError("stopped_early needs max_model_calls")
        if self.policy is not None and not (POLICY_DIR / f"{self.policy}.md").is_file():
            raise ValueError(f"no policy {self.policy!r} in {POLICY_DIR}")
        return self

    @property
    def instructions(self) -> str | None:
        """The text of the scenario's domain policy, if it names one."""
        return policy_text(self.policy) if self.policy else None

    @property
    def messages(self) -> list[str]:
        """Every message the user may send, the task first."""
        return [t.message for t in self.turns] or [self.task]

    @property
    def early_call_limit(self) -> int | None:
        """Most model calls the run may take, when the scenario expects an early stop."""
        return self.max_model_calls if self.expected_termination == "stopped_early" else None


def _check_turns(scenario: Scenario) -> None:
    turns, plan = scenario.turns, scenario.gold_actions
    if turns[0].message != scenario.task or turns[0].answers is not None:
        raise ValueError("a conversation's first turn is the task, asked outright")
    ends = [t.plan_end for t in turns]
    if ends != sorted(ends) or ends[-1] != len(plan):
        raise ValueError("turns' plan_end must not decrease and must end at the gold plan's end")
    if turns[-1].outputs:
        raise ValueError("the last turn's reply states the scenario's required_outputs")


@functools.lru_cache(maxsize=8)
def policy_text(name: str) -> str:
    """A shipped domain policy's text (one read per process)."""
    return (POLICY_DIR / f"{name}.md").read_text(encoding="utf-8").strip()


class ScenarioFileError(ValueError):
    """A scenario file that cannot be used; the message names the line and the field."""

    def __init__(self, path: Path | str, line: int, problem: str) -> None:
        super().__init__(f"{path}:{line}: {problem}")
        self.path, self.line, self.problem = str(path), line, problem


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        field = ".".join(str(p) for p in err["loc"]) or "(scenario)"
        parts.append(f"field '{field}': {err['msg']}")
    return "; ".join(parts)


def parse_scenarios(lines: Iterable[str], source: Path | str = "<scenarios>") -> list[Scenario]:
    """Scenarios from JSONL lines; blank lines and lines starting with // are skipped."""
    scenarios: list[Scenario] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(lines, start=1):
        text = raw.strip()
        if not text or text.startswith("//"):
            continue
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ScenarioFileError(source, number, f"invalid JSON: {exc.msg}") from exc
        if not isinstance(data, dict):
            raise ScenarioFileError(source, number, "a scenario must be a JSON object")
        try:
            scenario = Scenario.model_validate(data)
        except ValidationError as exc:
            raise ScenarioFileError(source, number, _describe(exc)) from exc
        if scenario.id in seen:
            raise ScenarioFileError(
                source,
                number,
                f"field 'id': duplicate {scenario.id!r} (first on line {seen[scenario.id]})",
            )
        seen[scenario.id] = number
        scenarios.append(scenario)
    if not scenarios:
        raise ScenarioFileError(source, 0, "no scenarios in the file")
    return scenarios


def load_scenarios(path: Path | str) -> list[Scenario]:
    """Every scenario in a JSONL file, or a ScenarioFileError naming line and field."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioFileError(file, 0, f"cannot read: {exc}") from exc
    return parse_scenarios(text.splitlines(), file)


def dump_scenarios(scenarios: Iterable[Scenario], path: Path | str) -> None:
    """Write scenarios as JSONL, one per line, defaults left out."""
    lines = [
        json.dumps(s.model_dump(mode="json", exclude_defaults=True), ensure_ascii=False)
        for s in scenarios
    ]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def scenario_json_schema() -> dict[str, Any]:
    """The JSON Schema of one scenario line (what data/schema.json publishes)."""
    schema = Scenario.model_json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


def render_schema() -> str:
    """The schema file's exact text."""
    return json.dumps(scenario_json_schema(), ensure_ascii=False, indent=2) + "\n"


def write_schema(path: Path = SCHEMA_PATH) -> Path:
    path.write_text(render_schema(), encoding="utf-8")
    return path
