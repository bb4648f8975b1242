"""All of tether's knobs in one typed place.

Defaults are the design note's numbers. Every field can be set with a ``TETHER_<NAME>``
environment variable, passed to :func:`tether.build_graph`, or overridden for one run through
LangGraph's runtime context (``graph.invoke(..., context={"max_steps": 5})``), which is also
what LangGraph Studio edits.
"""

from __future__ import annotations

import difflib
from functools import cache
from typing import Annotated, Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, create_model
from pydantic.functional_validators import AfterValidator
from pydantic_settings import BaseSettings, SettingsConfigDict

from tether.errors import SettingsError

SERVER_CONTEXT = 32768  # Qwen2.5-7B-Instruct, the reference model
EMBEDDED_CONTEXT = 8192  # SmolLM2's training context; the embedded server is started with it

ProtocolName = Literal["react", "json_schema", "native"]
"""The output protocols (tether.llm.protocols.PROTOCOLS has one object for each)."""


def _endpoint(url: str) -> str:
    """A URL httpx can open, refused here rather than as a crash at the first model call."""
    import httpx  # only when an endpoint is set: `tether --help` need not load it

    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise ValueError(f"not a usable URL ({exc})") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ValueError("must be an http:// or https:// URL with a host")
    return url


class AgentSettings(BaseSettings):
    """Model endpoint, loop policy and memory limits for one agent."""

    model_config = SettingsConfigDict(env_prefix="TETHER_", extra="forbid", frozen=True)

    # --- model endpoint -------------------------------------------------------------------
    base_url: Annotated[str, AfterValidator(_endpoint)] | None = Field(
        None,
        description="OpenAI-compatible endpoint (vLLM), e.g. http://localhost:8000/v1. "
        "Unset: tether serves its embedded local model.",
    )
    model: str = Field("Qwen2.5-7B-Instruct", description="Model name as the server knows it.")
    gguf_path: str | None = Field(
        None,
        description="GGUF file the embedded server loads when base_url is unset. "
        "Unset: the bundled SmolLM2-135M-Instruct.",
    )
    api_key: SecretStr = Field(SecretStr("EMPTY"), description="API key; vLLM ignores it.")
    temperature: float = Field(0.3, ge=0, le=2, description="Default sampling temperature.")
    calm_temperature: float = Field(
        0.1, ge=0, le=2, description="Temperature used after a run of successful steps."
    )
    top_p: float = Field(0.9, gt=0, le=1, description="Nucleus sampling.")
    max_tokens: int = Field(512, ge=1, description="Completion cap per model call.")
    request_timeout: float = Field(60.0, gt=0, description="Seconds before a model call fails.")
    protocol: ProtocolName | None = Field(
        None,
        description="react: Thought/Action/Action Input text, repaired and parsed. "
        "json_schema: a JSON action constrained by a schema of the current tools. "
        "native: the server's tool_calls (vLLM needs --enable-auto-tool-choice). "
        "Unset: json_schema for the embedded model (the only one SmolLM2 follows) and for a "
        "server at base_url (vLLM and llama.cpp constrain the reply to the schema, so no "
        "reply is malformed); react for a model passed to build_graph with no base_url.",
    )

    instructions: str | None = Field(
        None,
        description="Your agent's own instructions (a domain policy), added to tether's system "
        "prompt. The final-answer check reads a value they state as backed.",
    )
    small_model: bool | None = Field(
        None,
        description="Small-model profile: ids limited to those the task and results hold, the "
        "action before a short thought, every free-text field length-capped, only the "
        "best-matching tools offered (writes after a successful read; a tool whose id the "
        "context lacks, that just failed or that the operator rejected, withheld), results "
        "shortened, a final-answer step after a repeated successful call, temperature 0. "
        "Unset: on for the embedded model, off for a server. Needs the local extra "
        "(tether-local), which holds the profile.",
    )
    offered_tools: int | None = Field(
        None,
        ge=1,
        description="Tools offered to the model each step: the best matches for the task (the "
        "same at every step, so a server's prompt cache holds), plus the tools already used. "
        "Unset: 4 under the small-model profile, every tool otherwise.",
    )
    result_chars: int | None = Field(
        None,
        ge=100,
        description="Characters of one tool result the prompt shows; a longer one is cut with "
        "a visible marker (the run keeps it whole). Unset: 500 under the small-model "
        "profile (every prompt token costs time on a CPU), no cap otherwise.",
    )

    # --- loop policy ----------------------------------------------------------------------
    max_steps: int = Field(
        40,
        ge=1,
        description="Model calls (steps) a run, one user message on a thread, may make before "
        "it stops (max_steps). The loop makes one call a step, so a reply's parallel calls "
        "are steps each: the longest turn of the 611 successful recorded real runs needs 32 "
        "(tether replay; 10, the design note's number, cut 10 of them). Loops end long before "
        "it: the repeat guard by a call's fourth proposal, the breaker by four failures.",
    )
    token_budget: int = Field(
        128000,
        ge=1,
        description="Total tokens (server-reported) a run, one user message on a thread, may "
        "spend (partial). 128000, four full 32k contexts of the reference model, is above "
        "every user turn of the 611 successful recorded real runs (tether replay, loop face: "
        "the largest needed 98,440, the 99th percentile 42,559; real agents carry a 3k-11k "
        "token policy in every prompt), so no successful real run needs more. It bounds a "
        "runaway run's cost; the step cap and the repeat guard end loops long before.",
    )
    breaker_failures: int = Field(
        3,
        ge=1,
        description="Consecutive failed steps that bring the circuit breaker to the point of "
        "opening: the next prompt's note names what failed and says one more failure ends "
        "the run; the next failed step opens it (failed).",
    )
    max_tool_failures: int | None = Field(
        None,
        ge=1,
        description="Failed calls of one tool over the run that end it (failed), in a row or "
        "not; unset: no such limit.",
    )
    switch_after_failures: int = Field(
        2, ge=1, description="Consecutive failures after which the model is told to switch."
    )
    calm_after_successes: int = Field(
        3, ge=1, description="Consecutive successes after which calm_temperature is used."
    )
    repeat_limit: int = Field(
        3,
        ge=2,
        description="Same tool with the same arguments this often ends the run, when "
        "repeat_notes is 0 (with notes on, a repeat is answered with a note instead).",
    )
    repeat_notes: int = Field(
        2,
        ge=0,
        description="A call that already succeeded, proposed again with the same arguments, "
        "is not run: it is answered from its recorded result with a note naming the call. "
        "Proposed again after this many notes, the run ends no_progress. 0: no notes, the "
        "repeat_limit-th identical call ends the run. Two: a loop outlasts one note in about "
        "half the cases (Qwen2.5-7B's third identical call followed two in 13 of 23), and "
        "an answered repeat costs no tool call.",
    )
    check_final: bool = Field(
        True,
        description="Send a final answer back once, with a note naming what is wrong, when no "
        "tool has succeeded though the task names something a tool can look up, when it "
        "states an id, number or status no result holds, or when the task asked for a change "
        "no tool made. The second answer is taken as written.",
    )
    look_first: bool | None = Field(
        None,
        description="Until a tool has run, when the task names something a read tool can look "
        "up (its values fill the tool's required arguments), the step does not offer a final "
        "answer: json_schema leaves the answer out of the schema, native asks for a tool call "
        "(tool_choice required). react cannot constrain a reply; its answer is checked. "
        "Unset: on under the small-model profile only, where it also offers only the read "
        "tools the task asks for in words of their own until each has run, then the answer "
        "alone. A server model in a conversation asks the user first where its policy says so "
        "(a text reply was withheld in 4.9% of the successful recorded runs, tether replay); "
        "the final-answer check still sends back an answer given without looking.",
    )
    repair_output: bool = Field(
        True,
        description="Read replies that have exactly one reading though they break the format "
        "(a JSON object followed by prose, a bare value for a tool's one required field, "
        "call syntax), each repair recorded in the trace. False: such replies get the format "
        "note.",
    )
    cap_answer: bool = Field(
        True,
        description="At the step cap, the token budget (a reserve is kept for it) or the "
        "circuit breaker, make one last model call with no tools that asks for the best answer "
        "from what is known. The status stays max_steps, partial or failed.",
    )
    tool_attempts: int = Field(
        3, ge=1, description="Attempts for a transient tool failure, first one included."
    )
    retry_base_delay: float = Field(0.5, ge=0, description="First backoff delay, seconds.")
    retry_max_delay: float = Field(8.0, ge=0, description="Backoff delay cap, seconds.")
    min_confidence: float = Field(
        0.5, ge=0, le=1, description="A result whose meta.confidence_score is lower fails."
    )

    # --- tool health shared through a store (build_graph(store=...)): every run and worker ---
    health_failures: int = Field(
        5,
        ge=1,
        description="Transient failures of one tool in a row, by any run sharing the store, "
        "within health_window, that pause the tool for every run.",
    )
    health_window: float = Field(60.0, gt=0, description="Seconds those failures count for.")
    health_cooldown: float = Field(
        30.0,
        ge=0,
        description="Seconds a paused tool is refused before one probe call is let through: "
        "its success resumes the tool, its failure pauses it again.",
    )

    approval_tools: list[str] | None = Field(
        None,
        description="Tools that pause for approval before they run. Unset: the tools marked "
        "side_effects (payments, cancellations); [] turns approval off.",
    )

    # --- memory ---------------------------------------------------------------------------
    reasoning_window: int = Field(6, ge=1, description="Thought/Action entries kept.")
    tool_window: int = Field(3, ge=1, description="Tool results kept.")
    context_window: int | None = Field(
        None,
        ge=256,
        description="Model context length, tokens. Unset: 32768 (Qwen2.5-7B) for a server, "
        "the embedded model's context without one.",
    )
    max_tool_result_chars: int = Field(
        8000,
        ge=200,
        description="A tool result longer than this (as JSON) is cut, with a marker saying "
        "how much, before it enters the tool buffer and the prompt.",
    )
    memory_ratio: float = Field(
        0.7, gt=0, le=1, description="Share of the context window the prompt may fill."
    )

    @property
    def uses_embedded_model(self) -> bool:
        """No endpoint configured: tether serves a small local model itself."""
        return self.base_url is None

    @property
    def small_profile(self) -> bool:
        """Whether the small-model profile is in force (the setting, or the embedded model)."""
        return self.uses_embedded_model if self.small_model is None else self.small_model

    @property
    def protocol_name(self) -> ProtocolName:
        """The output protocol in force: the setting, or the one that fits the model."""
        if self.protocol is not None:
            return self.protocol
        return "json_schema"  # a model passed to build_graph gets react (nodes.deps)

    @property
    def context_tokens(self) -> int:
        """The context window in force: the setting, or the model's own."""
        if self.context_window is not None:
            return self.context_window
        return EMBEDDED_CONTEXT if self.uses_embedded_model else SERVER_CONTEXT

    @property
    def memory_budget(self) -> int:
        """Prompt tokens allowed: memory_ratio of the context window (22937 for 32768)."""
        return int(self.context_tokens * self.memory_ratio)

    def with_overrides(self, overrides: dict[str, Any]) -> AgentSettings:
        """A copy with some fields replaced, validated like the original.

        Validated by a plain model with the same fields: building a settings object would
        read every ``TETHER_*`` source again (milliseconds), only for the explicit values to
        win over them anyway."""
        if not overrides:
            return self
        data = self.model_dump() | overrides
        try:
            values = _field_checker().model_validate(data)
        except ValidationError as exc:
            raise SettingsError(_describe(exc)) from exc
        return type(self).model_construct(**{name: getattr(values, name) for name in data})


@cache
def _field_checker() -> type[BaseModel]:
    """AgentSettings' fields and constraints on a plain model, built once: it validates
    overrides without reading the environment."""
    fields: dict[str, Any] = {
        name: (info.annotation, info) for name, info in AgentSettings.model_fields.items()
    }
    return create_model(
        "AgentSettingsValues", __config__=ConfigDict(extra="forbid", frozen=True), **fields
    )


def _describe(exc: ValidationError) -> str:
    problems = [
        f"{'.'.join(str(p) for p in err['loc']) or 'settings'}: {err['msg']}"
        for err in exc.errors()
    ]
    return "invalid tether settings: " + "; ".join(problems)


def load_settings(**values: Any) -> AgentSettings:
    """Build settings from defaults, TETHER_* variables and ``values``, with a clear error."""
    try:
        return AgentSettings(**values)
    except ValidationError as exc:
        raise SettingsError(_describe(exc)) from exc


def check_tool_names(settings: AgentSettings, tools: list[str]) -> None:
    """Fail closed on a name in approval_tools no tool has: any list replaces the default
    gate, so a typo there would let every side-effecting tool run unapproved."""
    for name in [name for name in settings.approval_tools or () if name not in tools][:1]:
        lowered = {tool.lower(): tool for tool in tools}
        close = [lowered[c] for c in difflib.get_close_matches(name.lower(), lowered, cutoff=0.5)]
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        known = ", ".join(sorted(tools)) or "none"
        raise SettingsError(f"approval_tools names an unknown tool {name!r}{hint}; tools: {known}")


def run_settings_schema(base: AgentSettings | None = None) -> type[BaseModel]:
    """LangGraph's context schema: every AgentSettings field, optional, for one run or Studio.

    With ``base`` (the graph's own settings) each field's default is the value the run uses
    when it is left alone, so Studio's form shows real values; sending them back changes
    nothing. The API key is never shown."""
    fields: dict[str, Any] = {}
    for name, info in AgentSettings.model_fields.items():
        value = getattr(base, name) if base is not None else info.get_default()
        shown = None if base is None or name == "api_key" else value
        described = f"{info.description} (default: {info.get_default()!r})"
        fields[name] = (Optional[info.annotation], Field(shown, description=described))  # noqa: UP045
    return create_model(
        "RunSettings",
        __config__=ConfigDict(extra="forbid", frozen=True),  # read once per run, never stale
        __doc__="Per-run overrides of AgentSettings; unset fields keep the graph's settings.",
        **fields,
    )


RunSettings: type[BaseModel] = run_settings_schema()
"""The context schema of a graph whose settings are read at its first run."""


def resolve_settings(base: AgentSettings, context: Any) -> AgentSettings:
    """The settings for this run: the graph's, with the run's context applied on top."""
    if context is None:
        return base
    if isinstance(context, AgentSettings):
        return context
    if isinstance(context, BaseModel):
        return base.with_overrides(context.model_dump(exclude_none=True))
    if isinstance(context, dict):
        unknown = sorted(set(context) - set(AgentSettings.model_fields))
        if unknown:
            raise SettingsError(f"unknown tether settings: {', '.join(unknown)}")
        return base.with_overrides({k: v for k, v in context.items() if v is not None})
    raise SettingsError(f"run context must be a dict or AgentSettings, not {type(context)!r}")
