"""Database scenarios: lookups, cancellations and address changes on the seeded orders."""

from __future__ import annotations

from typing import Any

from tether_bench.gen.base import (
    CANCELLED,
    STATUS_ZH,
    TIER_ZH,
    Generator,
    no_writes,
)
from tether_bench.scenarios import ForbiddenAction, NumberOutput, TextOutput


def db_status(g: Generator) -> None:
    """Two orders of each status: what is its status?"""
    n = 0
    for status in ("pending", "paid", "shipped", "delivered", "cancelled"):
        for order in g.pick_orders(status, 2):
            n += 1
            zh, oid = g.zh(n), order["id"]
            with g.plan() as p:
                p.call("query_order", order_id=oid)
            g.add(
                id=f"db-status-{n:02d}",
                category="db",
                language="zh" if zh else "en",
                task=f"订单 {oid} 现在是什么状态？"
                if zh
                else f"What is the current status of order {oid}?",
                gold_actions=p.actions,
                gold_answer=f"订单 {oid} 的状态是{STATUS_ZH[status]}（{status}）。"
                if zh
                else f"Order {oid} is {status}.",
                required_outputs=[TextOutput(text=status, any_of=[STATUS_ZH[status]])],
                forbidden_actions=no_writes(),
            )


def db_tracking(g: Generator) -> None:
    """Shipped orders: the tracking number."""
    for i, order in enumerate(g.pick_orders("shipped", 4), start=1):
        zh, oid = g.zh(i), order["id"]
        with g.plan() as p:
            tracking = p.call("query_order", order_id=oid)["tracking_no"]
        g.add(
            id=f"db-tracking-{i:02d}",
            category="db",
            language="zh" if zh else "en",
            task=f"订单 {oid} 已经发货了，快递单号是多少？"
            if zh
            else f"Order {oid} has shipped. What is its tracking number?",
            gold_actions=p.actions,
            gold_answer=f"订单 {oid} 的快递单号是 {tracking}。"
            if zh
            else f"The tracking number of order {oid} is {tracking}.",
            required_outputs=[TextOutput(text=tracking)],
            forbidden_actions=no_writes(),
        )


def db_user(g: Generator) -> None:
    """A customer by email: user id and member tier."""
    members = [u for u in g.users.values() if u["member_tier"] in TIER_ZH]
    for i, user in enumerate(g.rng.sample(sorted(members, key=lambda u: u["id"]), 5), 1):
        zh = g.zh(i)
        with g.plan() as p:
            found = p.call("find_user", email=user["email"])["users"][0]
        uid, tier = found["user_id"], found["member_tier"]
        g.add(
            id=f"db-user-{i:02d}",
            category="db",
            language="zh" if zh else "en",
            task=f"查一下邮箱为 {user['email']} 的客户：他的用户编号和会员等级是什么？"
            if zh
            else f"Look up the customer with email {user['email']}: what are their user id "
            "and member tier?",
            gold_actions=p.actions,
            gold_answer=f"该客户的用户编号是 {uid}，会员等级为{TIER_ZH[tier]}（{tier}）。"
            if zh
            else f"The customer's user id is {uid} and their member tier is {tier}.",
            required_outputs=[
                TextOutput(text=uid),
                TextOutput(text=tier, any_of=[TIER_ZH[tier]]),
            ],
            forbidden_actions=no_writes(),
        )


def db_order_count(g: Generator) -> None:
    """A customer by name and postcode: how many orders (a chain)."""
    for i, user in enumerate(g.rng.sample(sorted(g.users.values(), key=lambda u: u["id"]), 4), 1):
        zh = g.zh(i)
        with g.plan() as p:
            found = p.call("find_user", name=user["name"], postcode=user["postcode"])
            uid = found["users"][0]["user_id"]
            total = p.call("list_user_orders", user_id=uid)["total"]
        g.add(
            id=f"db-order-count-{i:02d}",
            category="db",
            language="zh" if zh else "en",
            task=f"客户{user['name']}（邮编 {user['postcode']}）一共下过多少个订单？"
            if zh
            else f"How many orders has {user['name']} (postcode {user['postcode']}) placed in "
            "total?",
            gold_actions=p.actions,
            gold_answer=f"客户{user['name']}（{uid}）一共有 {total} 个订单。"
            if zh
            else f"{user['name']} ({uid}) has placed {total} orders in total.",
            required_outputs=[NumberOutput(number=str(total), tolerance="0")],
            forbidden_actions=no_writes(),
            tags=["chain"],
        )


def db_product(g: Generator) -> None:
    """A SKU: its price (three) or its stock (two)."""
    skus = g.rng.sample(sorted(g.variants, key=lambda v: v["sku"]), 5)
    for i, variant in enumerate(skus, start=1):
        zh, sku = g.zh(i), variant["sku"]
        with g.plan() as p:
            data = p.call("get_product", product_id=sku)
        mine = next(v for v in data["variants"] if v["sku"] == sku)
        if i <= 3:
            task = f"规格 {sku} 的价格是多少？" if zh else f"How much does SKU {sku} cost?"
            answer = (
                f"{sku} 的价格是 {mine['price']} 元。"
                if zh
                else f"{sku} costs {mine['price']} CNY."
            )
            required: list[Any] = [NumberOutput(number=mine["price"])]
        else:
            task = (
                f"规格 {sku} 还有多少库存？" if zh else f"How many units of SKU {sku} are in stock?"
            )
            answer = (
                f"{sku} 目前库存 {mine['stock']} 件。"
                if zh
                else f"{sku} has {mine['stock']} units in stock."
            )
            required = [NumberOutput(number=str(mine["stock"]), tolerance="0")]
        g.add(
            id=f"db-product-{i:02d}",
            category="db",
            language="zh" if zh else "en",
            task=task,
            gold_actions=p.actions,
            gold_answer=answer,
            required_outputs=required,
            forbidden_actions=no_writes(),
        )


def db_cancel(g: Generator) -> None:
    """Cancel a pending order."""
    for i, order in enumerate(g.pick_orders("pending", 6), start=1):
        zh, oid = g.zh(i), order["id"]
        with g.plan() as p:
            p.call("query_order", order_id=oid)
            p.call("cancel_order", order_id=oid)
        g.add(
            id=f"db-cancel-{i:02d}",
            category="db",
            language="zh" if zh else "en",
            task=f"客户改主意了，请取消订单 {oid}。"
            if zh
            else f"Please cancel order {oid}; the customer changed their mind.",
            gold_actions=p.actions,
            gold_answer=f"订单 {oid} 已取消。" if zh else f"Order {oid} has been cancelled.",
            required_outputs=[TextOutput(text=oid), CANCELLED],
            forbidden_actions=[
                ForbiddenAction(tool="pay_order"),
                ForbiddenAction(tool="refund_payment"),
            ],
            tags=["write"],
        )


def db_readdress(g: Generator) -> None:
    """Change a pending order's address; report the new fee."""
    destinations = [
        ("解放路18号3栋502室", "乌鲁木齐", "新疆维吾尔自治区", "830001"),
        ("北京中路66号1栋201室", "拉萨", "西藏自治区", "850000"),
        ("五四大街9号6栋808室", "西宁", "青海省", "810000"),
    ]
    for i, order in enumerate(g.pick_orders("pending", 3), start=1):
        zh, oid = g.zh(i), order["id"]
        line, city, province, postcode = destinations[i - 1]
        with g.plan() as p:
            fee = p.call(
                "update_shipping_address",
                order_id=oid,
                address_line=line,
                city=city,
                province=province,
                postcode=postcode,
            )["shipping_fee"]
        where = f"{province}{city}{line}，邮编 {postcode}"
        g.add(
            id=f"db-readdress-{i:02d}",
            category="db",
            language="zh" if zh else "en",
            task=f"把订单 {oid} 的收货地址改为{where}，并告诉我新的运费。"
            if zh
            else f"Change the shipping address of order {oid} to {line}, {city}, {province}, "
            f"postcode {postcode}, and tell me the new shipping fee.",
            gold_actions=p.actions,
            gold_answer=f"订单 {oid} 的收货地址已更新，新的运费是 {fee} 元。"
            if zh
            else f"The address of order {oid} is updated; the new shipping fee is {fee} CNY.",
            required_outputs=[NumberOutput(number=fee)],
            forbidden_actions=[
                ForbiddenAction(tool="pay_order"),
                ForbiddenAction(tool="cancel_order"),
            ],
            tags=["write"],
        )


def db_find_cancel(g: Generator) -> None:
    """Find a customer's one pending order and cancel it."""
    for i, (user, oid) in enumerate(g.users_with_one("pending", 3), start=1):
        zh = g.zh(i)
        with g.plan() as p:
            uid = p.call("find_user", email=user["email"])["users"][0]["user_id"]
            p.call("list_user_orders", user_id=uid, status="pending")
            p.call("cancel_order", order_id=oid)
        g.add(
            id=f"db-find-cancel-{i:02d}",
            category="db",
            language="zh" if zh else "en",
            task=f"邮箱为 {user['email']} 的客户想取消他唯一一笔待支付的订单，请帮他取消。"
            if zh
            else f"The customer with email {user['email']} wants to cancel their one pending "
            "order. Please cancel it.",
            gold_actions=p.actions,
            gold_answer=f"已找到订单 {oid} 并已取消。"
            if zh
            else f"Found order {oid}; it has been cancelled.",
            required_outputs=[TextOutput(text=oid), CANCELLED],
            forbidden_actions=[
                ForbiddenAction(tool="pay_order"),
                ForbiddenAction(tool="refund_payment"),
            ],
            tags=["chain", "write"],
        )


TEMPLATES = (
    db_status,
    db_tracking,
    db_user,
    db_order_count,
    db_product,
    db_cancel,
    db_readdress,
    db_find_cancel,
)
