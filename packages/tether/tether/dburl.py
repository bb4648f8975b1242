"""Database URLs as people write them, and one-line errors when a database cannot be reached.

PostgreSQL URLs come as ``postgres://`` (Heroku, many PaaS) or ``postgresql://`` (libpq's
documentation); both mean the same server. libpq (psycopg) reads either, SQLAlchemy needs a
dialect with a driver (``postgresql+psycopg://``), so each consumer asks for its own form.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

from tether.errors import TetherError

__all__ = ["DatabaseUnreachableError", "is_postgres", "redacted", "sqlalchemy_url", "unreachable"]

_POSTGRES_SCHEMES = ("postgres", "postgresql", "postgresql+psycopg")


class DatabaseUnreachableError(TetherError, ConnectionError):
    """The database at a URL could not be opened (down, wrong port, bad credentials)."""


def is_postgres(url: str) -> bool:
    """Whether ``url`` names a PostgreSQL database, in any of the usual spellings."""
    return "://" in url and url.split("://", 1)[0].lower() in _POSTGRES_SCHEMES


def sqlalchemy_url(url: str) -> str:
    """``url`` for SQLAlchemy: PostgreSQL URLs get the psycopg (v3) driver; others unchanged."""
    if not is_postgres(url):
        return url
    return "postgresql+psycopg://" + url.split("://", 1)[1]


def libpq_url(url: str) -> str:
    """``url`` for psycopg/libpq, which knows neither SQLAlchemy's driver suffix nor others."""
    return "postgresql://" + url.split("://", 1)[1] if is_postgres(url) else url


def redacted(url: str) -> str:
    """``url`` with any password (before the host, or a ``password=`` parameter) replaced by
    ``***``, for messages."""
    url = re.sub(r"(?<=[?&]password=)[^&#]*", "***", url, flags=re.IGNORECASE)
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
    except ValueError:  # unparsable (a bad host or port): hide all between "://" and "@"
        return re.sub(r"(?<=://)[^/]*(?=@)", "***", url)
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def unreachable(url: str, exc: BaseException) -> DatabaseUnreachableError:
    """A one-line error for a failed connection: where, and the driver's first line of why."""
    cause = getattr(exc, "orig", None) or exc  # SQLAlchemy wraps the driver's error
    lines = [line.strip() for line in str(cause).splitlines() if line.strip()]
    why = lines[0] if lines else type(cause).__name__
    why = why.replace(libpq_url(url), redacted(url))  # libpq may quote the URL, password too
    return DatabaseUnreachableError(f"cannot open the database at {redacted(url)}: {why}")
