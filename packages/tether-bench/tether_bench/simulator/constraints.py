"""What a request's constrained decoding guarantees about the reply, read from the request.

A ``response_format`` JSON schema, or ``tool_choice``/``strict`` on native tools, makes the
server's decoder rule out some faults (:class:`Constraints`); the schema's tool branches or
the native definitions say which tools a reply may call and with what arguments
(:class:`CallShape`); a native tool that takes the answer is how LangChain's ``ToolStrategy``
lets a model answer when only calls are admitted (:func:`answer_tool`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def is_json_format(fmt: Any) -> bool:
    return isinstance(fmt, dict) and fmt.get("type") in ("json_schema", "json_object")


@dataclass(frozen=True)
class Constraints:
    """What the server's constrained decoding guarantees about a reply to this request.

    vLLM and llama.cpp turn a ``response_format`` JSON schema into a grammar, and vLLM does
    the same for native tool calls when ``tool_choice`` is ``required`` or names a tool, or a
    function is ``strict``; with ``tool_choice`` ``auto`` the model writes freely."""

    valid_json: bool = False
    """The reply (or a call's arguments) is always parseable JSON."""
    tool_names_fixed: bool = False
    """A call can only name a tool the request lists."""
    arguments_fixed: bool = False
    """A call's arguments always have the required fields and no others."""
    calls_allowed: bool = True
    """A call can be written at all: a JSON schema with no tool branch, or ``tool_choice``
    ``none``, admits only an answer."""
    answers_allowed: bool = True
    """An answer can be written at all: a JSON schema whose every branch names a tool, or
    ``tool_choice`` ``required`` or naming a tool, admits only a call."""


@dataclass(frozen=True)
class CallShape:
    """A tool the request lets the model call, and what each required argument must be."""

    tool: str
    required: tuple[tuple[str, str | None, tuple[str, ...]], ...]
    """(name, pattern or None, enum values or ()) of each required argument."""


def constraints(body: dict[str, Any]) -> Constraints:
    """What constrained decoding guarantees for this request (see :class:`Constraints`)."""
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and is_json_format(fmt):
        spec = fmt.get("json_schema")
        branches = _tool_branches(spec.get("schema") if isinstance(spec, dict) else None)
        schema = spec.get("schema") if isinstance(spec, dict) else None
        return Constraints(
            valid_json=True,
            tool_names_fixed=bool(branches),
            arguments_fixed=bool(branches) and all(map(_closed_arguments, branches)),
            calls_allowed=bool(branches),
            answers_allowed=not branches or _admits_answer(schema),
        )
    if body.get("tool_choice") == "none":
        return Constraints(calls_allowed=False)
    listed = [t.get("function") for t in as_list(body.get("tools")) if isinstance(t, dict)]
    functions = [f for f in listed if isinstance(f, dict)]
    choice = body.get("tool_choice")
    guided = choice == "required" or isinstance(choice, dict)
    strict = bool(functions) and all(f.get("strict") is True for f in functions)
    if not (guided or strict):
        return Constraints()
    return Constraints(
        valid_json=True,
        tool_names_fixed=guided,
        arguments_fixed=True,
        answers_allowed=not (guided and functions) or answer_tool(body) is not None,
    )


_ANSWER_WORDS = re.compile(r"\b(answers?|respon(?:se|d)s?|repl(?:y|ies)|final)\b", re.IGNORECASE)


def answer_tool(body: dict[str, Any]) -> tuple[str, str] | None:
    """The native tool whose name or description says it takes the answer (``answer``,
    ``response``, ``reply``, ``final``) and that has a string argument to put it in, with that
    argument (a required one first): what a model calls to answer when ``tool_choice`` admits
    only calls, as LangChain's ``ToolStrategy`` asks. None when no tool reads so."""
    for tool in as_list(body.get("tools")):
        fn = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            continue
        name = re.sub(r"(?<=[a-z])(?=[A-Z])|_", " ", fn["name"])
        if not _ANSWER_WORDS.search(f"{name} {fn.get('description') or ''}"):
            continue
        params = fn.get("parameters") or {}
        props = params.get("properties") if isinstance(params, dict) else None
        if not isinstance(props, dict):
            continue
        strings = [k for k, v in props.items() if isinstance(v, dict) and v.get("type") == "string"]
        required = [k for k in as_list(params.get("required")) if k in strings]
        if strings:
            return fn["name"], (required or strings)[0]
    return None


def _admits_answer(node: Any) -> bool:
    """Some choice (``anyOf``/``oneOf``) that offers a tool branch offers a branch that names
    no tool beside it: the place where a reply is either a call or something else."""
    if isinstance(node, dict):
        for key in ("anyOf", "oneOf"):
            options = as_list(node.get(key))
            named = [bool(_tool_branches(option)) for option in options]
            if any(named) and not all(named):
                return True
        return any(_admits_answer(value) for value in node.values())
    if isinstance(node, list):
        return any(_admits_answer(value) for value in node)
    return False


def call_shapes(body: dict[str, Any]) -> tuple[CallShape, ...]:
    """The tools a reply may call, from the JSON schema's tool branches or the native tool
    definitions, each with its required arguments' pattern and enum."""
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and is_json_format(fmt):
        spec = fmt.get("json_schema")
        schema = spec.get("schema") if isinstance(spec, dict) else None
        defs = schema.get("$defs", {}) if isinstance(schema, dict) else {}
        return tuple(
            CallShape(branch["properties"]["tool"].get("const", ""), _required(args, defs))
            for branch in _tool_branches(schema)
            for args in [branch.get("properties", {}).get("arguments", {})]
        )
    shapes = []
    for tool in as_list(body.get("tools")):
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            params = fn.get("parameters") or {}
            shapes.append(CallShape(fn["name"], _required(params, params.get("$defs", {}))))
    return tuple(shapes)


def _required(args: Any, defs: Any) -> tuple[tuple[str, str | None, tuple[str, ...]], ...]:
    """(name, pattern, enum) of each required property of an arguments schema."""
    if isinstance(args, dict) and isinstance(args.get("$ref"), str) and isinstance(defs, dict):
        args = defs.get(args["$ref"].rsplit("/", 1)[-1], {})
    if not isinstance(args, dict):
        return ()
    properties = args.get("properties")
    found = []
    for name in as_list(args.get("required")):
        spec = properties.get(name) if isinstance(properties, dict) else None
        if not isinstance(spec, dict):
            spec = {}
        pattern = spec.get("pattern") if isinstance(spec.get("pattern"), str) else None
        enum = tuple(str(v) for v in as_list(spec.get("enum")))
        found.append((str(name), pattern, enum))
    return tuple(found)


def _tool_branches(node: Any) -> list[dict[str, Any]]:
    """Every object schema that fixes a tool name (``{"tool": {"const": name}, ...}``)."""
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        tool = node.get("properties", {}).get("tool") if "properties" in node else None
        if isinstance(tool, dict) and ("const" in tool or "enum" in tool):
            found.append(node)
        for value in node.values():
            found += _tool_branches(value)
    elif isinstance(node, list):
        for value in node:
            found += _tool_branches(value)
    return found


def _closed_arguments(branch: dict[str, Any]) -> bool:
    """The branch requires its arguments, and they admit no field but the declared ones."""
    arguments = branch.get("properties", {}).get("arguments")
    return (
        "arguments" in branch.get("required", [])
        and isinstance(arguments, dict)
        and arguments.get("additionalProperties") is False
    )
