"""Turn a plain typed function into a tool with an explicit argument schema."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, overload

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel

from tether.tools.marks import SIDE_EFFECTS


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
    approval before running it.
    """

    def wrap(fn: Callable[..., Any]) -> BaseTool:
        text = description or (fn.__doc__ or "").strip()
        if not text:
            raise ValueError(f"tool {fn.__name__!r} needs a docstring or a description")
        is_async = inspect.iscoroutinefunction(fn)
        return StructuredTool.from_function(
            None if is_async else fn,
            coroutine=fn if is_async else None,
            name=name or fn.__name__,
            description=text,
            args_schema=args_schema,
            infer_schema=args_schema is None,
            metadata={SIDE_EFFECTS: side_effects},
        )

    return wrap(func) if func is not None else wrap
