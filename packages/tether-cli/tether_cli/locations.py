"""Where runs are kept, as people give it: a SQLite path, or a URL of a supported database.

The core reads any text without ``postgres://`` as a SQLite path, so ``mysql://u:pw@h/db``
became a directory with the password in its name and an empty list of runs. A URL of any
other scheme is refused here, naming the scheme only (never the rest, which may hold a
password). A command the CLI prints shows a database URL without its password
(:func:`without_password`).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

from tether import TetherError

STORE_SCHEMES = ("postgres", "postgresql", "postgresql+psycopg", "sqlite")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def check_store(location: str) -> str:
    """``location`` if tether can keep runs there; else a one-line TetherError."""
    if not location.strip():
        raise TetherError("--store cannot be empty: give a SQLite path or a postgres:// URL")
    found = _SCHEME.match(location)
    if found and found.group(1).lower() not in STORE_SCHEMES:
        raise TetherError(
            f"--store: unsupported URL scheme {found.group(1)!r}; give a SQLite path or a "
            "postgres:// URL"
        )
    return location


_PASSWORD_PARAM = re.compile(r"(?<=[?&])password=[^&#]*(&|(?=#)|$)", re.IGNORECASE)


def without_password(url: str) -> str:
    """``url`` without its password, in the user part or a ``password=`` parameter; libpq
    (psycopg) then takes it from ``PGPASSWORD`` or ``~/.pgpass``. Anything else unchanged."""
    url = _PASSWORD_PARAM.sub("", url).replace("?#", "#").rstrip("?&")
    try:
        parts = urlsplit(url)
        user_info, at, host = parts.netloc.rpartition("@")
    except ValueError:  # unparsable (a bad port): drop all between "://" and "@"
        return re.sub(r"(?<=://)[^/@]*:[^/]*@", "", url)
    user, _, password = user_info.partition(":")
    return urlunsplit(parts._replace(netloc=user + at + host)) if password else url


def password_not_kept(url: str | None) -> bool:
    """Whether ``url`` is one a run remembers whose password it did not keep (``***``)."""
    return url is not None and urlsplit(url).password == "***"
