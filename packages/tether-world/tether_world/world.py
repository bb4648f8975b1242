"""The World facade: one seeded database, its payment API, its tools, its state hash.

A world lives in a data directory (``world.sqlite`` there) or at any SQLAlchemy URL. It is
seeded on first use and then keeps its state, so ``tether world serve`` and the agent share
one world; :meth:`World.reset` returns it to the seeded state, and :meth:`World.temporary`
makes a throwaway world so runs never share state by accident.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from pathlib import Path
from types import TracebackType
from typing import Any

import sqlalchemy as sa
from langchain_core.tools import BaseTool
from sqlalchemy.engine import Engine
from starlette.applications import Starlette
from tether.dburl import unreachable
from tether.tools import ToolRegistry

from tether_world import db, snapshot
from tether_world import seed as seeding
from tether_world.calc import calc_tools
from tether_world.faults import API_ENDPOINTS, FaultInjector, FaultPlan
from tether_world.orders import OrderTools
from tether_world.payment_tools import TOOL_NAMES as PAYMENT_TOOL_NAMES
from tether_world.payment_tools import PaymentTools
from tether_world.payments_app import create_payments_app
from tether_world.payments_client import IN_PROCESS_URL, PaymentsClient
from tether_world.payments_service import PaymentService
from tether_world.transport import InProcessTransport

DB_FILE = "world.sqlite"
WORLD_DB_ENV = "TETHER_WORLD_DB"  # a database URL for the world instead of the data directory
SCHEMA_VERSION = "1"


def default_data_dir() -> Path:
    """``$TETHER_DATA_DIR``, else ``./data``."""
    return Path(os.environ.get("TETHER_DATA_DIR") or "data")


class World:
    """A seeded orders database with its payment service and tools."""

    def __init__(
        self, engine: Engine, *, seed: int, data_dir: Path | None, owns_dir: bool = False
    ) -> None:
        self.engine = engine
        self.seed = seed
        self.data_dir = data_dir
        self._owns_dir = owns_dir
        self._service = PaymentService(engine)
        self._faults = FaultInjector(API_ENDPOINTS)
        self._app: Starlette | None = None
        self._transport: InProcessTransport | None = None
        self._clients: list[PaymentsClient] = []
        self._lock = threading.Lock()
        self._faults.add_targets(tool.name for tool in self._local_tools(None))
        self._faults.add_targets(PAYMENT_TOOL_NAMES)

    # --- creation ---------------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        data_dir: str | Path | None = None,
        *,
        url: str | None = None,
        seed: int = seeding.DEFAULT_SEED,
        fresh: bool = False,
    ) -> World:
        """Open the world at ``url`` or in ``data_dir``; with neither, at ``$TETHER_WORLD_DB``
        if set, else in :func:`default_data_dir`.

        The database is created and seeded if empty; ``fresh=True`` resets it to the seeded
        state. Opening a database seeded with another seed raises ValueError rather than
        silently mixing worlds.
        """
        directory: Path | None = None
        if url is None and data_dir is None:
            url = os.environ.get(WORLD_DB_ENV) or None
        if url is None:
            directory = Path(data_dir) if data_dir is not None else default_data_dir()
            directory.mkdir(parents=True, exist_ok=True)
            url = f"sqlite:///{(directory / DB_FILE).resolve()}"
        world = cls(db.make_engine(url), seed=seed, data_dir=directory)
        try:
            world._open(fresh=fresh)
        except sa.exc.DatabaseError as exc:  # unreachable, or a file that is not a database
            world.close()
            raise unreachable(url, exc) from None
        except BaseException:
            world.close()
            raise
        return world

    @classmethod
    def temporary(cls, *, seed: int = seeding.DEFAULT_SEED) -> World:
        """A world in a new temporary directory, deleted again by :meth:`close`."""
        directory = Path(tempfile.mkdtemp(prefix="tether-world-"))
        world = cls(
            db.make_engine(f"sqlite:///{directory / DB_FILE}"),
            seed=seed,
            data_dir=directory,
            owns_dir=True,
        )
        try:
            world._open(fresh=True)
        except BaseException:
            world.close()
            raise
        return world

    def _open(self, *, fresh: bool) -> None:
        db.metadata.create_all(self.engine)
        with self.engine.begin() as conn:
            meta = {row.key: row.value for row in conn.execute(sa.select(db.world_meta))}
            if not meta:
                self._load(conn)
                return
        if fresh:
            self.reset()
        elif meta.get("seed") != str(self.seed):
            raise ValueError(
                f"the world at {self.engine.url!r} was seeded with seed {meta.get('seed')}, not "
                f"{self.seed}; open it with that seed, or reset it (tether world reset --seed "
                f"{self.seed})"
            )

    def _load(self, conn: sa.Connection) -> None:
        seeding.load(conn, seeding.generate(self.seed))
        conn.execute(
            db.world_meta.insert(),
            [
                {"key": "seed", "value": str(self.seed)},
                {"key": "schema_version", "value": SCHEMA_VERSION},
            ],
        )

    # --- state ------------------------------------------------------------------------------
    def reset(self) -> None:
        """Back to the seeded state (data and ledger); fault plans replay from the start."""
        with self.engine.begin() as conn:
            for table in (*reversed(db.WORLD_TABLES), db.world_meta):
                conn.execute(table.delete())
            self._load(conn)
        self._faults.rewind()

    def snapshot(self) -> dict[str, list[dict[str, Any]]]:
        """The canonical state :meth:`snapshot_hash` hashes (useful to diff two worlds)."""
        return snapshot.snapshot(self.engine)

    def snapshot_hash(self) -> str:
        """sha256 over every table and the ledger, independent of row order, ids and clocks."""
        return snapshot.snapshot_hash(self.engine)

    def payments(self) -> list[dict[str, Any]]:
        """The payments ledger, oldest first (seeded payments included)."""
        return self._service.ledger()

    # --- faults -----------------------------------------------------------------------------
    @property
    def faults(self) -> FaultInjector:
        return self._faults

    def set_faults(self, plan: FaultPlan | None = None) -> None:
        """Inject faults by target (API endpoint or tool name); None clears them."""
        self._faults.set_plan(plan)

    # --- payment API ------------------------------------------------------------------------
    def payments_app(self) -> Starlette:
        """This world's payment API as an ASGI app (serve it, or use it in-process)."""
        with self._lock:
            if self._app is None:
                self._app = create_payments_app(self._service, self._faults)
            return self._app

    def payments_client(
        self, *, base_url: str | None = None, timeout: float = 5.0
    ) -> PaymentsClient:
        """A client for the payment API at ``base_url``, or for this world's app in-process."""
        transport = None
        if base_url is None:
            app = self.payments_app()
            with self._lock:
                if self._transport is None:
                    self._transport = InProcessTransport(app)
                transport = self._transport
        client = PaymentsClient(base_url or IN_PROCESS_URL, transport=transport, timeout=timeout)
        with self._lock:
            self._clients.append(client)
        return client

    # --- tools ------------------------------------------------------------------------------
    def tools(self, *, payments_url: str | None = None, timeout: float = 5.0) -> list[BaseTool]:
        """Every world tool; payment tools call ``payments_url`` or the in-process API."""
        client = self.payments_client(base_url=payments_url, timeout=timeout)
        payment_tools = PaymentTools(client).tools(self._faults)
        return [*self._local_tools(self._faults), *payment_tools]

    def registry(self, *, payments_url: str | None = None, timeout: float = 5.0) -> ToolRegistry:
        """A ToolRegistry holding :meth:`tools`."""
        return ToolRegistry(self.tools(payments_url=payments_url, timeout=timeout))

    def _local_tools(self, faults: FaultInjector | None) -> list[BaseTool]:
        return [*OrderTools(self.engine).tools(faults), *calc_tools(faults)]

    # --- lifecycle --------------------------------------------------------------------------
    def close(self) -> None:
        """Close clients, the in-process service and the engine; a temporary world is deleted."""
        with self._lock:
            clients, self._clients = self._clients, []
            transport, self._transport = self._transport, None
        for client in clients:
            client.close()
        if transport is not None:
            transport.close()
        self.engine.dispose()
        if self._owns_dir and self.data_dir is not None:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self) -> World:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
