"""Public names loaded on first use, so importing a package compiles none of its modules."""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable
from typing import Any


def lazy_getattr(package: str, namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports a public name on first use from the module its
    ``if TYPE_CHECKING:`` block imports it from: those imports, which type checkers read,
    are the one list of the package's names (read from its source at the first lookup)."""
    exports: dict[str, str] = {}

    def __getattr__(name: str) -> Any:
        if not exports:
            exports.update(_checked_imports(namespace["__loader__"].get_source(package)))
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__


def _checked_imports(source: str) -> dict[str, str]:
    """Each name imported in the module's top-level ``if TYPE_CHECKING:`` block, and its module."""
    return {
        alias.asname or alias.name: str(node.module)
        for block in ast.parse(source).body
        if isinstance(block, ast.If) and ast.unparse(block.test) == "TYPE_CHECKING"
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
