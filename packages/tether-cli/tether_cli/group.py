"""How every ``tether`` command fails: bad input gets one line on stderr and exit 2.

Command-line arguments, environment variables, files and URLs are untrusted input. The
:class:`TetherGroup` wraps the whole command tree, so no command can let a traceback out for
them; ``tether --debug ...`` shows the traceback when one is wanted.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import typer
from tether import TetherError
from typer._click import Context
from typer._click.exceptions import ClickException, NoArgsIsHelpError
from typer.core import TyperGroup
from typer.exceptions import Abort, Exit

from tether_cli.visible import visible

EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 1


def one_line(exc: BaseException) -> str:
    """An exception's message on one line (or its type when it has none)."""
    return " ".join(str(exc).split()) or type(exc).__name__


def fail(message: str, code: int = EXIT_BAD_INPUT) -> NoReturn:
    """Print ``error: message`` on stderr and exit (raises typer.Exit)."""
    sys.stderr.write(f"error: {visible(message)}\n")
    sys.stderr.flush()
    raise typer.Exit(code)


def _bad_input_types() -> tuple[type[BaseException], ...]:
    """Errors that mean the user's input (settings, paths, URLs, answers) is unusable."""
    types: list[type[BaseException]] = [TetherError, ValueError, OSError, sqlite3.Error]
    sa_exc = sys.modules.get("sqlalchemy.exc")  # only when a command has used SQLAlchemy
    if sa_exc is not None:
        types += [sa_exc.ArgumentError, sa_exc.OperationalError]
    return tuple(types)


def check_utf8(args: Sequence[str]) -> None:
    """Refuse arguments that are not valid UTF-8 (Python keeps such bytes as surrogates)."""
    for position, arg in enumerate(args, start=1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError as exc:
            byte = ord(arg[exc.start]) - 0xDC00  # surrogateescape keeps byte b as U+DC00+b
            where = f"byte 0x{byte:02x}" if 0x80 <= byte <= 0xFF else "a lone surrogate"
            fail(f"argument {position} is not valid UTF-8 text ({where} at character {exc.start})")


class TetherGroup(TyperGroup):
    """The root command group: one-line errors for usage mistakes and bad input."""

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        args = list(sys.argv[1:] if args is None else args)
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            check_utf8(args)
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except NoArgsIsHelpError as exc:
            exc.show()
            code = exc.exit_code
        except ClickException as exc:  # usage errors: bad option values, unknown options
            ctx = getattr(exc, "ctx", None)  # usage errors know their command
            hint = f" (see: {ctx.command_path} --help)" if ctx is not None else ""
            said = visible(" ".join(exc.format_message().split()))
            sys.stderr.write(f"error: {said}{hint}\n")
            code = exc.exit_code
        except Exit as exc:
            code = exc.exit_code
        except Abort:
            code = EXIT_INTERNAL
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: Context) -> Any:
        try:
            return super().invoke(ctx)
        except (ClickException, Exit, Abort):
            raise
        except Exception as exc:
            if ctx.params.get("debug"):
                raise
            if isinstance(exc, _bad_input_types()):
                fail(one_line(exc))
            fail(
                f"internal error: {type(exc).__name__}: {one_line(exc)} "
                "(run again with tether --debug for the traceback)",
                EXIT_INTERNAL,
            )
