"""Where runs are kept, as people give it: a SQLite path, or a URL of a supported database.

The core reads any text without ``postgres://`` as a SQLite path, so ``mysql://u:pw@h/db``
became a directory with the password in its name and an empty list of runs. A URL of any
other scheme is refused here, naming the scheme only (never the rest, which may hold a
password).
"""

from __future__ import annotations

import re

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
