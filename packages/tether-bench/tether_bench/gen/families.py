"""Scenario families from recorded real conversations: a read again after a write, and a
change the world's rules forbid (the right answer declines it and says why).

* ``reread``: read a variant's stock, cancel an order holding it (which puts the items back),
  read the stock again and report it. Only the second read shows the new figure, so an agent
  that answers the second read from the first one's record reports a stale number; the
  required output is the stock in the world's final state.
* ``refusal``: cancel or re-address an order whose status forbids it, or pay a cancelled one.
  The gold plan looks the order up and declines; the write tool on that order is forbidden,
  so an agent that tries it fails even when the world refuses the call.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

from tether_bench.gen.base import SEED_ORDER, STATUS_ZH, Generator, no_writes
from tether_bench.scenarios import ForbiddenAction, NumberOutput, TextOutput
from tether_bench.simulator.facts import known_numbers

REREAD_COUNT = 4


def candidates(g: Generator, status: str) -> Iterator[dict[str, Any]]:
    """Unused orders of ``status`` in a seeded random order; the caller marks what it uses."""
    pool = sorted(
        (o for o in g.orders if o["status"] == status and o["id"] not in g.used | {SEED_ORDER}),
        key=lambda o: o["id"],
    )
    g.rng.shuffle(pool)
    yield from pool


def stock_of(product: dict[str, Any], sku: str) -> int:
    return next(int(v["stock"]) for v in product["variants"] if v["sku"] == sku)


def reread_plan(g: Generator, oid: str, sku: str) -> tuple[Any, int] | None:
    """The gold plan (read, cancel, read again) and the new stock, or None when the new
    figure already shows before the second read (it would not need reading again)."""
    with g.plan() as p:
        before = p.call("get_product", product_id=sku)
        cancelled = p.call("cancel_order", order_id=oid)
        after = stock_of(p.call("get_product", product_id=sku), sku)
    seen = f"{oid} {sku} " + json.dumps([before, cancelled])
    if Decimal(after) in known_numbers(seen):
        return None
    return p, after


def reread_stock(g: Generator) -> None:
    """Read a stock figure, cancel an order that restocks it, read it again, report it."""
    n = 0
    for order in candidates(g, "pending"):
        if n == REREAD_COUNT:
            break
        with g.plan() as probe:
            items = probe.call("query_order", order_id=order["id"])["items"]
        found = next((r for item in items if (r := reread_plan(g, order["id"], item["sku"]))), None)
        if found is None:
            continue
        n += 1
        g.used.add(order["id"])
        plan, after = found
        add_reread(g, n, order["id"], plan.actions[0].arguments["product_id"], plan, after)


def add_reread(g: Generator, n: int, oid: str, sku: str, plan: Any, after: int) -> None:
    zh = g.zh(n)
    g.add(
        id=f"reread-stock-{n:02d}",
        category="reread",
        language="zh" if zh else "en",
        task=f"订单 {oid} 里有规格 {sku}。先查一下 {sku} 的库存，再取消订单 {oid}，"
        f"然后告诉我 {sku} 现在的库存是多少。"
        if zh
        else f"Order {oid} contains SKU {sku}. Check the stock of {sku}, cancel order {oid}, "
        f"then tell me how many units of {sku} are in stock now.",
        gold_actions=plan.actions,
        gold_answer=f"订单 {oid} 已取消，{sku} 现在的库存是 {after} 件。"
        if zh
        else f"Order {oid} is cancelled; {sku} now has {after} units in stock.",
        required_outputs=[NumberOutput(number=str(after), tolerance="0")],
        forbidden_actions=[
            ForbiddenAction(tool=t)
            for t in ("pay_order", "refund_payment", "update_shipping_address")
        ],
        tags=["chain", "write", "read-after-write"],
    )


AskFor = Callable[[str, bool], str]
"""The task for an order id, in Chinese or not."""

REFUSALS: list[tuple[str, str, str, AskFor]] = [
    (
        "cancel-shipped",
        "shipped",
        "cancel_order",
        lambda oid, zh: (
            f"客户改主意了，请马上取消订单 {oid}。"
            if zh
            else f"The customer changed their mind: cancel order {oid} right away."
        ),
    ),
    (
        "cancel-delivered",
        "delivered",
        "cancel_order",
        lambda oid, zh: (
            f"请取消订单 {oid}，客户不想要了。"
            if zh
            else f"Please cancel order {oid}; the customer no longer wants it."
        ),
    ),
    (
        "readdress-shipped",
        "shipped",
        "update_shipping_address",
        lambda oid, zh: (
            f"把订单 {oid} 的收货地址改成 上海市 上海市 南京西路 88 号，邮编 200041。"
            if zh
            else f"Change the shipping address of order {oid} to 88 Nanjing West Road, Shanghai, "
            "Shanghai, postcode 200041."
        ),
    ),
    (
        "pay-cancelled",
        "cancelled",
        "pay_order",
        lambda oid, zh: f"请帮我支付订单 {oid}。" if zh else f"Please pay order {oid} for me.",
    ),
]
"""(kind, the order's status, the write the task asks for (forbidden, as every write), the
task)."""


def refusals(g: Generator) -> None:
    """Two orders per kind whose status forbids the change: look, decline, say why."""
    n = 0
    for kind, status, _write, ask in REFUSALS:
        for order in g.pick_orders(status, 2):
            n += 1
            zh, oid = g.zh(n), order["id"]
            with g.plan() as p:
                p.call("query_order", order_id=oid)
            word = STATUS_ZH[status]
            g.add(
                id=f"refusal-{kind}-{n:02d}",
                category="refusal",
                language="zh" if zh else "en",
                task=ask(oid, zh),
                gold_actions=p.actions,
                gold_answer=f"订单 {oid} {word}，无法办理。"
                if zh
                else f"Order {oid} is {status}, so this cannot be done.",
                required_outputs=[TextOutput(text=status, any_of=[word])],
                forbidden_actions=no_writes(),
                expected_termination="stopped_early",
                max_model_calls=4,
                tags=["state", "refusal"],
            )


TEMPLATES = (reread_stock, refusals)
