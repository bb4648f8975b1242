"""The recorded run's tools, rebuilt as tether tools that answer from the log.

A tools file is either a list of tool specs or an object mapping a toolset key to such a list
(the real-runs ``tools.json``: a conversation names its key in ``toolset``). A spec is
``{"name", "description", "parameters" (JSON Schema), "side_effects" (true for a write)}``.
Without a file, or for a tool the file lacks, the spec is inferred from the calls the runs made:
every argument any call passed, required when every call passed it, and a write when the tool's
name starts with a verb that changes something (:data:`WRITE_VERBS`).

No tool runs: each replay tool returns the result the log holds for the call being replayed
(:class:`Cursor`), and a result the log marks as an error is raised as the tool's error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import BaseModel, ConfigDict, Field, create_model

from tether_replay.records import Conversation, RecordError

WRITE_VERBS = frozenset(
    (
        *("add", "book", "cancel", "change", "create", "delete", "disable", "enable"),
        *("exchange", "grant", "modify", "pay", "post", "put", "refund", "remove", "reset"),
        *("return", "send", "set", "submit", "toggle", "transfer", "update", "write"),
    )
)
"""First words of a tool name that make an inferred tool a write."""


@dataclass(frozen=True)
class ToolSpec:
    """One tool as a tools file (or the inference) describes it."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=dict)
    side_effects: bool = False


class ToolFile:
    """The tools file: specs by toolset key, or one list for every conversation."""

    def __init__(self, sets: dict[str | None, list[ToolSpec]]) -> None:
        self._sets = sets

    @classmethod
    def read(cls, path: Path) -> ToolFile:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise RecordError(f"{path}: cannot read the tools file ({exc})") from None
        if isinstance(data, list):
            return cls({None: [_spec(item, path) for item in data]})
        if isinstance(data, dict):
            return cls(
                {str(key): [_spec(item, path) for item in specs] for key, specs in data.items()}
            )
        raise RecordError(f"{path}: a tools file holds a list of tools or an object of lists")

    def specs_for(self, conversation: Conversation) -> list[ToolSpec]:
        """The conversation's tools: its toolset's (or the one list), plus inferred specs for
        tools it calls that the file lacks."""
        listed = self._sets.get(conversation.toolset) or self._sets.get(None) or []
        known = {spec.name for spec in listed}
        extra = [s for s in infer_specs([conversation]) if s.name not in known]
        return [*listed, *extra]


def infer_specs(conversations: Iterable[Conversation]) -> list[ToolSpec]:
    """Specs rebuilt from the calls the conversations made (see the module docstring)."""
    seen: dict[str, list[dict[str, Any]]] = {}
    for conversation in conversations:
        for turn in conversation.turns:
            for reply in turn.replies:
                for call in reply.calls:
                    seen.setdefault(call.name, []).append(call.arguments)
    specs = []
    for name, calls in seen.items():
        names = list(dict.fromkeys(key for arguments in calls for key in arguments))
        required = [key for key in names if all(key in arguments for arguments in calls)]
        parameters = {"type": "object", "properties": {k: {} for k in names}, "required": required}
        specs.append(ToolSpec(name, "", parameters, is_write_name(name)))
    return specs


def is_write_name(name: str) -> bool:
    """Whether a tool's name starts with a verb that changes something (``cancel_order``)."""
    words = re.findall(r"[a-z]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", name).lower())
    return bool(words) and words[0] in WRITE_VERBS


def _spec(item: Any, path: Path) -> ToolSpec:
    if not isinstance(item, dict) or not isinstance(item.get("name"), str):
        raise RecordError(f"{path}: each tool needs a name ({str(item)[:80]})")
    parameters = item.get("parameters") or {}
    return ToolSpec(
        name=item["name"],
        description=str(item.get("description") or ""),
        parameters=parameters if isinstance(parameters, dict) else {},
        side_effects=bool(item.get("side_effects")),
    )


# --- tools that answer from the log -------------------------------------------------------------


@dataclass
class Cursor:
    """The logged results of the calls in the reply being replayed, offered by the replay
    model as it gives the reply, and what the tools ran (a recall's staleness is read
    from it)."""

    pending: list[tuple[str, str, str, bool]] = field(default_factory=list)
    """(tool, arguments as canonical JSON, result text, whether it was an error)."""
    ran: list[tuple[str, str, bool]] = field(default_factory=list)
    """(tool, arguments as canonical JSON, whether it succeeded) for each tool run."""

    def offer(self, results: list[tuple[str, Any, str, bool]]) -> None:
        """The reply now given: its calls' logged results (what was offered before and not
        run is dropped: tether answered that call itself)."""
        self.pending = [(n, canonical(a), text, error) for n, a, text, error in results]

    def take(self, name: str, arguments: Any) -> tuple[str, bool]:
        """The logged result for a run of ``name``: the call with these arguments, else the
        first pending call of that tool; a call the log never answered is an error."""
        key = canonical(arguments)
        matches = [i for i, p in enumerate(self.pending) if p[0] == name]
        exact = [i for i in matches if self.pending[i][1] == key]
        chosen = next(iter(exact or matches), None)
        if chosen is None:
            outcome = ("the log holds no result for this call", True)
        else:
            _, _, text, error = self.pending.pop(chosen)
            outcome = (text, error)
        self.ran.append((name, key, not outcome[1]))
        return outcome


def replay_tools(specs: Sequence[ToolSpec], cursor: Cursor) -> list[BaseTool]:
    """One tether-ready tool per spec (an args_schema, the side_effects mark)."""
    return [_replay_tool(spec, cursor) for spec in specs]


def _replay_tool(spec: ToolSpec, cursor: Cursor) -> BaseTool:
    def answer(**arguments: Any) -> str:
        text, failed = cursor.take(spec.name, arguments)
        if failed:
            raise ToolException(text or "the tool reported an error")
        return text

    return StructuredTool.from_function(
        answer,
        name=spec.name,
        description=spec.description or spec.name,
        args_schema=schema_model(spec),
        metadata={"side_effects": spec.side_effects},
        handle_tool_error=False,
    )


def canonical(arguments: Any) -> str:
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)


_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list,
    "object": dict,
}


def schema_model(spec: ToolSpec) -> type[BaseModel]:
    """A pydantic model of the spec's top-level arguments: each JSON type, its enum, its
    pattern and whether it is required; anything the spec leaves open accepts any value."""
    properties = spec.parameters.get("properties") or {}
    required = set(spec.parameters.get("required") or [])
    fields: dict[str, Any] = {}
    for name, prop in properties.items():
        prop = prop if isinstance(prop, dict) else {}
        declared = prop.get("type")
        kind: Any = _TYPES.get(declared, Any) if isinstance(declared, str) else Any
        enum = prop.get("enum")
        if isinstance(enum, list) and enum and all(isinstance(v, str) for v in enum):
            kind = Literal[tuple(enum)]
        pattern = prop.get("pattern") if kind is str else None
        extra: dict[str, Any] = {"pattern": pattern} if isinstance(pattern, str) else {}
        if name not in required:
            kind = kind | None
        described: Any = Field(  # type: ignore[call-overload]
            ... if name in required else None,
            alias=name,
            description=str(prop.get("description", "")),
            **extra,
        )
        fields[_field_name(name)] = (kind, described)
    return create_model(  # type: ignore[call-overload, no-any-return]
        re.sub(r"\W", "_", spec.name) + "_args",
        __config__=ConfigDict(extra="allow", populate_by_name=True),
        **fields,
    )


def _field_name(name: str) -> str:
    """A Python identifier for an argument (the alias keeps the logged name)."""
    ident = re.sub(r"\W", "_", name)
    return f"f_{ident}" if not ident.isidentifier() or ident.startswith("_") else ident
