"""A call's arguments as the tool will receive them, for telling calls apart; a tool's
required arguments and the values that fill them."""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from langchain_core.tools import BaseTool
from pydantic import BaseModel, ValidationError


def args_model(tool: BaseTool | None) -> type[BaseModel] | None:
    """The tool's pydantic arguments model (None without one)."""
    schema = tool.args_schema if tool is not None else None
    return schema if isinstance(schema, type) and issubclass(schema, BaseModel) else None


def effective_arguments(tool: BaseTool | None, arguments: dict[str, Any]) -> dict[str, Any] | None:
    """The arguments validated by the tool's schema, defaults filled in, as JSON values; None
    when there is no schema or they do not validate. Two calls that differ only in spelling
    out a default (``coupon_code: null``) or in an id's case are the same call: a weak model
    alternated between such forms, and each counted as a new call for the repeat rules."""
    if (schema := args_model(tool)) is None:
        return None
    try:
        dumped: dict[str, Any] = schema.model_validate(arguments).model_dump(mode="json")
    except (ValidationError, ValueError, TypeError):
        return None
    return dumped


def requirements(tool: BaseTool | None) -> tuple[tuple[str, str | None], ...]:
    """Each required argument of ``tool`` and its pattern (None without one); none known
    without a pydantic schema."""
    if (schema := args_model(tool)) is None:
        return ()
    spec = schema.model_json_schema()
    properties = spec.get("properties", {})
    found: list[tuple[str, str | None]] = []
    for name in spec.get("required", []):
        pattern = properties.get(name, {}).get("pattern")
        found.append((str(name), pattern if isinstance(pattern, str) else None))
    return tuple(found)


def fills(pattern: str, values: Collection[str]) -> bool:
    """Some value matches ``pattern`` whole (as written, or upper-cased)."""
    try:
        return any(re.fullmatch(pattern, v) or re.fullmatch(pattern, v.upper()) for v in values)
    except re.error:  # a pattern Python's re cannot read: no value is known to fill it
        return False
