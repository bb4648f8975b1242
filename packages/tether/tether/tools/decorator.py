"""Turn a plain typed function into a tool with an explicit argument schema."""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable
from typing import Any, overload

from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.tools.base import ToolOutputMixin
from pydantic import BaseModel

from tether.tools.marks import ANSWERS, SIDE_EFFECTS
from tether.tools.results import from_return


@overload
def tool(func: Callable[..., Any], /) -> BaseTool: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    args_schema: type[BaseModel] | None = None,
    side_effects: bool = False,
) -> Callable[[Callable[..., Any]], BaseTool]: ...


def tool(
    func: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    args_schema: type[BaseModel] | None = None,
    side_effects: bool = False,
) -> BaseTool | Callable[[Callable[..., Any]], BaseTool]:
    """Wrap ``func`` as a LangChain tool.

    The schema comes from ``args_schema`` or, failing that, from the function's type hints
    (use ``Annotated[str, Field(description=...)]`` to describe each argument). The docstring
    is the description the model sees, so a function without one is refused.
    An ``async def`` becomes a tool for ``ainvoke`` (its sync ``invoke`` reports an error).
    ``side_effects=True`` marks a tool that changes the world; by default tether asks for
    approval before running it. Called with a tool call (as LangChain's ToolNode calls it,
    under ``create_agent``), the tool answers with JSON text for the model and what the
    function returned (a :class:`~tether.tools.ToolOutput` too) as the message's artifact.
    """

    def wrap(fn: Callable[..., Any]) -> BaseTool:
        text = description or (fn.__doc__ or "").strip()
        if not text:
            raise ValueError(f"tool {fn.__name__!r} needs a docstring or a description")
        is_async = inspect.iscoroutinefunction(fn)
        answering = _answering(fn)
        return StructuredTool.from_function(
            None if is_async else answering,
            coroutine=answering if is_async else None,
            name=name or fn.__name__,
            description=text,
            args_schema=args_schema,
            infer_schema=args_schema is None,
            response_format="content_and_artifact",
            metadata={SIDE_EFFECTS: side_effects, ANSWERS: True},
        )

    return wrap(func) if func is not None else wrap


def _answering(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` returning (the text the model reads, what ``fn`` returned)."""

    @functools.wraps(fn)
    def answer(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        returned = fn(*args, **kwargs)
        return answer_text(returned), returned

    @functools.wraps(fn)
    async def answer_async(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        returned = await fn(*args, **kwargs)
        return answer_text(returned), returned

    return answer_async if inspect.iscoroutinefunction(fn) else answer


def answer_text(returned: Any) -> Any:
    """What the model reads of a tool's return value: its data as JSON (a string as it is),
    or a handled failure's message, as the registry's envelope holds them. Messages and
    commands (ToolNode's own answers, or a list of them) pass as they are."""
    first = returned[0] if isinstance(returned, list) and returned else returned
    if isinstance(first, ToolOutputMixin):
        return returned
    envelope = from_return(returned)  # a failure's envelope holds its message, no data
    data = envelope["data"] if envelope["status"] == "success" else envelope.get("message", "")
    return data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
