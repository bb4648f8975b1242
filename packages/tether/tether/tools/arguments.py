"""A call's arguments as the tool will receive them, for telling calls apart."""

from __future__ import annotations

from typing import Any

from langchain_core.tools import BaseTool
from pydantic import BaseModel, ValidationError


def effective_arguments(tool: BaseTool | None, arguments: dict[str, Any]) -> dict[str, Any] | None:
    """The arguments validated by the tool's schema, defaults filled in, as JSON values; None
    when there is no schema or they do not validate. Two calls that differ only in spelling
    out a default (``coupon_code: null``) or in an id's case are the same call: a weak model
    alternated between such forms, and each counted as a new call for the repeat rules."""
    schema = tool.args_schema if tool is not None else None
    if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
        return None
    try:
        dumped: dict[str, Any] = schema.model_validate(arguments).model_dump(mode="json")
    except (ValidationError, ValueError, TypeError):
        return None
    return dumped
