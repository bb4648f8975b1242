"""Call a plain function tool the way LangChain would, without redoing its introspection.

``BaseTool.invoke`` reads the function's signature and type hints on every call (to find
``config``, ``callbacks`` and ``run_manager`` parameters), parses the arguments again and
opens a callback run. For a ``StructuredTool`` over a plain function (its parameters are
exactly its schema's fields: nothing injected, no config, no callbacks) that introspection
always gives the same answer, so it is done once per function here. The call itself is
taken directly only when no callback handler would see it (none passed, none on the tool,
no tracing switched on): anything that observes tool runs gets LangChain's own path.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable
from typing import Any, get_args, get_type_hints

from langchain_core.callbacks import AsyncCallbackManager, CallbackManager
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import ensure_config, patch_config, set_config_context
from langchain_core.tools import BaseTool, InjectedToolArg, StructuredTool
from pydantic import BaseModel

_RESERVED = frozenset({"callbacks", "run_manager", "config"})
_PLAIN_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def direct_function(tool: BaseTool, *, run_async: bool) -> Callable[..., Any] | None:
    """The function behind ``tool`` when calling it directly is what LangChain would do
    (same function, same arguments, no error handling or output formatting of its own),
    else None."""
    if type(tool) is not StructuredTool:  # a subclass may override run/_run
        return None
    fn = tool.coroutine if run_async else tool.func
    schema = tool.args_schema
    if fn is None or not (isinstance(schema, type) and issubclass(schema, BaseModel)):
        return None
    if tool.callbacks is not None or tool.verbose or tool.response_format != "content":
        return None
    if tool.handle_tool_error or tool.handle_validation_error:
        return None
    fields = frozenset(schema.model_fields)
    if frozenset(tool.tool_call_schema.model_fields) != fields:  # type: ignore[union-attr]
        return None  # some field is injected by LangChain, not given by the model
    return fn if _takes_only(fn, fields) else None


@functools.lru_cache(maxsize=512)
def _takes_only(fn: Callable[..., Any], fields: frozenset[str]) -> bool:
    """Whether ``fn``'s parameters are exactly ``fields``, by keyword, none of them one
    LangChain fills in (config, callbacks, run manager, an injected argument). Cached: a
    function's signature does not change, and reading it is most of LangChain's per-call
    cost."""
    try:
        params = inspect.signature(fn).parameters
        hints = get_type_hints(fn, include_extras=True)
    except Exception:  # unresolvable annotations: let LangChain deal with the function
        return False
    if set(params) != fields or fields & _RESERVED:
        return False
    if any(p.kind not in _PLAIN_KINDS for p in params.values()):
        return False
    return not any(_filled_in(hints.get(name)) for name in params)


def _filled_in(hint: Any) -> bool:
    """A hint LangChain treats as its own to fill: a RunnableConfig or an injected arg."""
    if hint is RunnableConfig:
        return True
    return any(
        isinstance(meta, InjectedToolArg)
        or (isinstance(meta, type) and issubclass(meta, InjectedToolArg))
        for meta in get_args(hint)[1:]
    )


def invoke_tool(tool: BaseTool, args: dict[str, Any], config: RunnableConfig | None) -> Any:
    """``tool.invoke(args, config=config)``: directly when that is the same call."""
    fn = direct_function(tool, run_async=False)
    ready = _unobserved(tool, config, CallbackManager) if fn is not None else None
    if fn is None or ready is None:
        return tool.invoke(args, config=config)
    kwargs = _parsed_arguments(tool, args)
    with set_config_context(ready) as context:  # nested runnables inherit the config
        return context.run(fn, **kwargs)


async def ainvoke_tool(tool: BaseTool, args: dict[str, Any], config: RunnableConfig | None) -> Any:
    """``await tool.ainvoke(args, config=config)``: directly when that is the same call."""
    fn = direct_function(tool, run_async=True)
    ready = _unobserved(tool, config, AsyncCallbackManager) if fn is not None else None
    if fn is None or ready is None:
        return await tool.ainvoke(args, config=config)
    kwargs = _parsed_arguments(tool, args)
    with set_config_context(ready) as context:  # awaited in a task carrying the config
        return await asyncio.create_task(fn(**kwargs), context=context)


def _parsed_arguments(tool: BaseTool, args: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments LangChain's input parsing gives the function for ``args``:
    validated by the schema, read back by field: each field given (by name or alias) and
    each field with a default in the schema (which wins over the function's own default)."""
    schema = tool.args_schema
    assert isinstance(schema, type) and issubclass(schema, BaseModel)
    validated = schema.model_validate(args)
    given = validated.model_fields_set | args.keys()
    return {
        name: getattr(validated, name)
        for name, field in type(validated).model_fields.items()
        if name in given or not field.is_required()
    }


def _unobserved(
    tool: BaseTool,
    config: RunnableConfig | None,
    managers: type[CallbackManager] | type[AsyncCallbackManager],
) -> RunnableConfig | None:
    """The config the tool body would run with (as ``invoke`` builds it) when no callback
    handler would see the call; None when one would (passed in, inherited from the graph,
    on the tool, or added by tracing)."""
    config = ensure_config(config)
    manager = managers.configure(
        config.get("callbacks"),
        tool.callbacks,
        tool.verbose,
        config.get("tags"),
        tool.tags,
        config.get("metadata"),
        tool.metadata,
    )
    return None if manager.handlers else patch_config(config, callbacks=manager)
