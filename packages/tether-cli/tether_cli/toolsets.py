"""Toolsets: the tools an agent is given and whatever they act on, found by name.

A package makes a toolset available by declaring an entry point in the ``tether.toolsets``
group whose object is a factory ``create(data_dir: Path | None, *, url: str | None) -> Toolset``
(``url`` only when the toolset keeps a database). ``tether-world`` declares ``demo``. A
dotted module path that exposes ``create_world`` works too, for toolsets not installed as a
package: the current directory is searched first, as ``python -m`` would (the ``tether``
script's own directory is not where a user's module lives).

A factory that fails (raises, returns something that is not a toolset, or calls
``sys.exit``) is an input error: one line naming the toolset, not an internal error, and
never a silent exit having run nothing.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from tether import TetherError, ToolRegistry
from tether.extras import MissingExtraError

ENTRY_POINT_GROUP = "tether.toolsets"

__all__ = ["ENTRY_POINT_GROUP", "Toolset", "load_toolset", "toolset_names"]


@runtime_checkable
class Toolset(Protocol):
    """What a toolset gives an agent: its tools, and a way to release what backs them."""

    def registry(self) -> ToolRegistry: ...
    def close(self) -> None: ...


def toolset_names() -> list[str]:
    """The names of the installed toolsets (their ``tether.toolsets`` entry points)."""
    return sorted({ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)})


def _factory(name: str) -> Callable[..., Any]:
    """The named entry point's factory, else ``create_world`` of the module of that path."""
    found = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == name]
    try:
        if found:
            return found[0].load()  # type: ignore[no-any-return]
        if not all(part.isidentifier() for part in name.split(".")):
            raise _unknown(name, "nor a module path")  # ".x" would be a relative import
        module = _import_from_cwd(name)
    except (MissingExtraError, TetherError):
        raise
    except ModuleNotFoundError as exc:
        if exc.name is None or not name.startswith(exc.name):
            raise TetherError(f"cannot import toolset {name!r}: {exc}") from exc
        raise _unknown(name, "nor an importable module") from None
    except ImportError as exc:
        raise TetherError(f"cannot import toolset {name!r}: {exc}") from exc
    except (Exception, SystemExit) as exc:  # the module's own code failed as it loaded
        raise _failed(name, "cannot import", exc) from exc
    factory = getattr(module, "create_world", None)
    if not callable(factory):
        raise _unknown(name, "nor a module with a create_world(data_dir) function")
    return factory  # type: ignore[no-any-return]


def _import_from_cwd(name: str) -> Any:
    """Import module ``name`` with the current directory on the path, as ``python -m`` puts
    it (and leaves it: the toolset may import its own modules later)."""
    here = os.getcwd()
    if here not in sys.path:
        sys.path.insert(0, here)
    return importlib.import_module(name)


def _unknown(name: str, what_else: str) -> TetherError:
    known = ", ".join(toolset_names()) or "none installed"
    return TetherError(f"{name!r} is neither an installed toolset ({known}) {what_else}")


def load_toolset(name: str, data_dir: Path | None = None, database: str | None = None) -> Toolset:
    """Create the toolset ``name`` (an entry point name or a module path), with clear errors.

    ``data_dir`` left out is the documented default: ``$TETHER_DATA_DIR``, else ``./data``.
    """
    from tether.control import default_data_dir

    if not name.strip():
        raise TetherError("a toolset name cannot be empty")
    factory = _factory(name)
    kwargs: dict[str, Any] = {}
    if database is not None:
        if "url" not in inspect.signature(factory).parameters:
            raise TetherError(f"toolset {name!r} does not take a database URL")
        kwargs["url"] = database
    made = _call(name, factory, data_dir or default_data_dir(), kwargs)
    if not isinstance(made, Toolset):
        raise TetherError(
            f"toolset {name!r} gave {type(made).__name__}, not a toolset "
            "(an object with registry() and close())"
        )
    return made


def _call(name: str, factory: Callable[..., Any], data_dir: Path, kwargs: dict[str, Any]) -> Any:
    """The factory's toolset; its failure (an exception, or ``sys.exit``) as one line."""
    try:
        return factory(data_dir, **kwargs)
    except TetherError:
        raise  # tether's own, already one line (a missing extra, a database down)
    except (Exception, SystemExit) as exc:
        raise _failed(name, "failed to start", exc) from exc


def _failed(name: str, what: str, exc: BaseException) -> TetherError:
    said = " ".join(str(exc).split()) or "no message"
    return TetherError(f"toolset {name!r} {what}: {type(exc).__name__}: {said}")
