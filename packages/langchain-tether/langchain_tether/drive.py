"""One body for a hook's sync and async forms: the hook is written as a generator that yields
each request to send and is sent back the handler's response (or thrown its exception), and
:func:`drive` or :func:`adrive` runs it against LangChain's sync or async handler."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from typing import TypeVar

Request = TypeVar("Request")
Response = TypeVar("Response")
Result = TypeVar("Result")

Steps = Generator[Request, Response, Result]
"""A hook's body: yields requests, is sent their responses, returns the hook's result."""


def drive(
    steps: Steps[Request, Response, Result], handler: Callable[[Request], Response]
) -> Result:
    """The hook's result, each request it yields sent through ``handler``."""
    try:
        request = next(steps)
        while True:
            try:
                response = handler(request)
            except BaseException as exc:  # the body's ``with`` blocks close as it unwinds
                request = steps.throw(exc)
            else:
                request = steps.send(response)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


async def adrive(
    steps: Steps[Request, Response, Result], handler: Callable[[Request], Awaitable[Response]]
) -> Result:
    """:func:`drive`, for an async handler."""
    try:
        request = next(steps)
        while True:
            try:
                response = await handler(request)
            except BaseException as exc:
                request = steps.throw(exc)
            else:
                request = steps.send(response)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
