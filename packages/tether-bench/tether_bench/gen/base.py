"""What every scenario template shares: the seeded world's data, fresh worlds to plan on,
and draws of unused orders and users from one seeded generator.

Templates run in a fixed order (see :mod:`tether_bench.make_scenarios`) and share the draws,
so the file comes out the same every time.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from tether_world.seed import DEFAULT_SEED, generate

from tether_bench.scenarios import ForbiddenAction, Scenario, TextOutput, ToolAction
from tether_bench.worlds import WorldFactory

SEED_ORDER = "ORD-2024-001"
GENERATOR_SEED = 5
WRITES = ("pay_order", "refund_payment", "cancel_order", "update_shipping_address")
STATUS_ZH = {
    "pending": "待支付",
    "paid": "已支付",
    "shipped": "已发货",
    "delivered": "已送达",
    "cancelled": "已取消",
}
TIER_ZH = {"silver": "银卡", "gold": "金卡", "platinum": "白金"}
CANNOT = TextOutput(
    text="cannot",
    any_of=["can't", "can not", "unable", "not able", "no tool", "无法", "不能", "没有"],
)
ORDER_ID_NEEDED = TextOutput(
    text="order id",
    any_of=["order number", "order ID", "which order", "订单号", "订单编号", "哪个订单"],
)
CANCELLED = TextOutput(text="cancelled", any_of=["canceled", "已取消", "取消成功", "已经取消"])
REFUNDED = TextOutput(text="refunded", any_of=["已退款", "退款成功", "已经退款"])


def no_writes() -> list[ForbiddenAction]:
    return [ForbiddenAction(tool=t) for t in WRITES]


def money(value: Any) -> str:
    return f"{Decimal(str(value)):.2f}"


class PlanError(RuntimeError):
    """A planned call failed on the fresh world: the template picked bad data."""


@dataclass
class Plan:
    """Calls made on a live world while building one scenario, recorded as its gold actions."""

    registry: Any
    actions: list[ToolAction] = field(default_factory=list)

    def call(self, tool: str, **arguments: Any) -> Any:
        result = self.registry.invoke(tool, arguments)
        if result["status"] != "success":
            raise PlanError(f"{tool}({arguments}) failed: {result.get('message')}")
        self.actions.append(ToolAction(tool=tool, arguments=arguments))
        return result["data"]


class Generator:
    """The state templates share: data, the draw generator, used ids, the scenarios so far."""

    def __init__(self, worlds: WorldFactory, seed: int = GENERATOR_SEED) -> None:
        self.worlds = worlds
        self.rng = random.Random(seed)
        data = generate(DEFAULT_SEED)
        self.orders = data.tables["orders"]
        self.users = {u["id"]: u for u in data.tables["users"]}
        self.variants = data.tables["variants"]
        self.used: set[str] = set()
        self.by_user: dict[tuple[str, str], list[str]] = defaultdict(list)
        for order in self.orders:
            self.by_user[(order["user_id"], order["status"])].append(order["id"])
        self.scenarios: list[Scenario] = []

    # --- helpers --------------------------------------------------------------------------
    @contextmanager
    def plan(self, setup: list[ToolAction] | None = None) -> Iterator[Plan]:
        with self.worlds.fresh() as world:
            registry = world.registry()
            for action in setup or []:
                if registry.invoke(action.tool, action.arguments)["status"] != "success":
                    raise PlanError(f"setup {action.tool} failed")
            yield Plan(registry)

    def pick_orders(self, status: str, n: int, *, seed_first: bool = False) -> list[dict[str, Any]]:
        """``n`` distinct unused orders with this status; ``seed_first``: the seed's running
        example ORD-2024-001 first (it is kept out of every other draw)."""
        pool = [
            o
            for o in self.orders
            if o["status"] == status and o["id"] not in self.used and o["id"] != SEED_ORDER
        ]
        first = [o for o in self.orders if o["id"] == SEED_ORDER] if seed_first else []
        chosen = first + self.rng.sample(pool, n - len(first))
        self.used.update(o["id"] for o in chosen)
        return chosen

    def users_with_one(self, status: str, n: int) -> list[tuple[dict[str, Any], str]]:
        """``n`` users with exactly one order of ``status`` (and that order's id)."""
        pool = sorted(
            (uid, ids[0])
            for (uid, st), ids in self.by_user.items()
            if st == status and len(ids) == 1 and ids[0] not in self.used
        )
        chosen = self.rng.sample(pool, n)
        self.used.update(oid for _, oid in chosen)
        return [(self.users[uid], oid) for uid, oid in chosen]

    def add(self, **fields: Any) -> None:
        self.scenarios.append(Scenario.model_validate(fields))

    @staticmethod
    def zh(index: int) -> bool:
        return index % 2 == 0
