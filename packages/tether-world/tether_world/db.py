"""The world's database: one schema for orders, catalogue, users and the payments ledger.

Money columns hold integer cents (see :mod:`tether_world.money`). Columns whose values differ
between two runs that did the same thing (generated ids, idempotency keys, wall-clock times,
free-text reasons) carry ``info={"volatile": True}`` and are left out of the snapshot hash.

SQLite (the default) is opened so that concurrent writers queue instead of failing: WAL
journal, a generous busy timeout, and ``BEGIN IMMEDIATE`` for every transaction, which takes
the write lock up front so a read-then-write transaction cannot be overtaken half-way.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy import (
    CheckConstraint,
    Column,
    DateTime,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    event,
)
from sqlalchemy.engine import Engine
from tether.dburl import sqlalchemy_url

ORDER_STATUSES = ("pending", "paid", "shipped", "delivered", "cancelled")
PAYMENT_STATUSES = ("succeeded", "refunded")
VOLATILE: dict[str, Any] = {"volatile": True}

metadata = MetaData()

world_meta = Table(
    "world_meta",
    metadata,
    Column("key", String(32), primary_key=True),
    Column("value", String(200), nullable=False),
    info={"snapshot": False},
)

users = Table(
    "users",
    metadata,
    Column("id", String(16), primary_key=True),
    Column("name", String(100), nullable=False),
    Column("email", String(200), nullable=False, unique=True),
    Column("phone", String(32), nullable=False),
    Column("language", String(2), nullable=False),
    Column("member_tier", String(16), nullable=False),
    Column("country", String(2), nullable=False),
    Column("province", String(64), nullable=False),
    Column("city", String(64), nullable=False),
    Column("address_line", String(200), nullable=False),
    Column("postcode", String(16), nullable=False),
    Column("created_at", DateTime, nullable=False),
    CheckConstraint("member_tier IN ('none', 'silver', 'gold', 'platinum')", name="user_tier"),
)

products = Table(
    "products",
    metadata,
    Column("id", String(8), primary_key=True),
    Column("name_zh", String(100), nullable=False),
    Column("name_en", String(100), nullable=False),
    Column("category", String(32), nullable=False),
)

variants = Table(
    "variants",
    metadata,
    Column("sku", String(40), primary_key=True),
    Column("product_id", ForeignKey("products.id"), nullable=False, index=True),
    Column("attributes", String(100), nullable=False),
    Column("price_cents", Integer, nullable=False),
    Column("weight_g", Integer, nullable=False),
    Column("stock", Integer, nullable=False),
    CheckConstraint("stock >= 0", name="variant_stock"),
    CheckConstraint("price_cents > 0", name="variant_price"),
)

orders = Table(
    "orders",
    metadata,
    Column("id", String(20), primary_key=True),
    Column("user_id", ForeignKey("users.id"), nullable=False, index=True),
    Column("status", String(16), nullable=False),
    Column("created_at", DateTime, nullable=False),
    Column("coupon_code", String(16)),
    Column("subtotal_cents", Integer, nullable=False),
    Column("shipping_fee_cents", Integer, nullable=False),
    Column("currency", String(3), nullable=False),
    Column("recipient_name", String(100), nullable=False),
    Column("phone", String(32), nullable=False),
    Column("country", String(2), nullable=False),
    Column("province", String(64), nullable=False),
    Column("city", String(64), nullable=False),
    Column("address_line", String(200), nullable=False),
    Column("postcode", String(16), nullable=False),
    Column("tracking_no", String(32)),
    Column("shipped_at", DateTime),
    Column("delivered_at", DateTime),
    Column("cancelled_at", DateTime, info=VOLATILE),
    Column("cancel_reason", String(200), info=VOLATILE),
    Column("updated_at", DateTime, info=VOLATILE),
    CheckConstraint(
        "status IN ('pending', 'paid', 'shipped', 'delivered', 'cancelled')", name="order_status"
    ),
)

order_items = Table(
    "order_items",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("order_id", ForeignKey("orders.id"), nullable=False, index=True),
    Column("sku", ForeignKey("variants.sku"), nullable=False),
    Column("quantity", Integer, nullable=False),
    Column("unit_price_cents", Integer, nullable=False),
)

payments = Table(
    "payments",
    metadata,
    Column("id", String(32), primary_key=True, info=VOLATILE),
    Column("idempotency_key", String(128), nullable=False, unique=True, info=VOLATILE),
    Column("request_hash", String(64), nullable=False, info=VOLATILE),
    Column("order_id", ForeignKey("orders.id"), nullable=False, index=True),
    Column("amount_cents", Integer, nullable=False),
    Column("currency", String(3), nullable=False),
    Column("status", String(16), nullable=False),
    Column("created_at", DateTime, nullable=False, info=VOLATILE),
    Column("refunded_at", DateTime, info=VOLATILE),
    Column("refund_reason", String(200), info=VOLATILE),
    CheckConstraint("amount_cents > 0", name="payment_amount"),
    CheckConstraint("status IN ('succeeded', 'refunded')", name="payment_status"),
)

WORLD_TABLES = (users, products, variants, orders, order_items, payments)
"""The tables that make up the world's state, parents before children."""


def make_engine(url: str) -> Engine:
    """An engine for ``url``; SQLite files are set up for safe concurrent writers.

    ``postgres://`` and ``postgresql://`` both select PostgreSQL through psycopg (v3).
    """
    url = sqlalchemy_url(url)
    parsed = sa.engine.make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return sa.create_engine(url, pool_pre_ping=True)
    if parsed.database in (None, "", ":memory:"):
        raise ValueError(
            "an in-memory SQLite database cannot be shared by the tools and the payment "
            "service; use a file (World.temporary() makes one in a temporary directory)"
        )
    engine = sa.create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
    event.listen(engine, "connect", _sqlite_connect)
    event.listen(engine, "begin", _sqlite_begin)
    return engine


def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.isolation_level = None  # transactions are begun by _sqlite_begin
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def _sqlite_begin(connection: sa.Connection) -> None:
    connection.exec_driver_sql("BEGIN IMMEDIATE")
