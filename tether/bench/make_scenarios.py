"""Generate scenarios/bench.jsonl from the seeded world, so every gold argument is real.

Each scenario's plan is executed on a fresh world while it is built: arguments of later steps
come from earlier results (the payable amount from compute_discount, the payment id from
query_order), and required outputs come from what the tools answered. The file is then
re-read and every scenario is replayed by the gold agent, which must pass them all.

    uv run python -m tether.bench.make_scenarios            # rewrite the file and the schema
    uv run python -m tether.bench.make_scenarios --check    # fail if either is out of date
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from tether.bench.scenarios import (
    SCHEMA_PATH,
    ForbiddenAction,
    InitialState,
    NumberOutput,
    Scenario,
    TextOutput,
    ToolAction,
    dump_scenarios,
    load_scenarios,
    render_schema,
)
from tether.bench.worlds import WorldFactory
from tether.world.seed import DEFAULT_SEED, generate

OUT = SCHEMA_PATH.parent / "bench.jsonl"
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
    """Builds the scenarios template by template, each on a fresh world."""

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

    # --- db -------------------------------------------------------------------------------
    def db(self) -> None:
        n = 0
        for status in ("pending", "paid", "shipped", "delivered", "cancelled"):
            for order in self.pick_orders(status, 2):
                n += 1
                zh, oid = self.zh(n), order["id"]
                with self.plan() as p:
                    p.call("query_order", order_id=oid)
                self.add(
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
        for i, order in enumerate(self.pick_orders("shipped", 4), start=1):
            zh, oid = self.zh(i), order["id"]
            with self.plan() as p:
                tracking = p.call("query_order", order_id=oid)["tracking_no"]
            self.add(
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
        members = [u for u in self.users.values() if u["member_tier"] in TIER_ZH]
        for i, user in enumerate(self.rng.sample(sorted(members, key=lambda u: u["id"]), 5), 1):
            zh = self.zh(i)
            with self.plan() as p:
                found = p.call("find_user", email=user["email"])["users"][0]
            uid, tier = found["user_id"], found["member_tier"]
            self.add(
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
        for i, user in enumerate(
            self.rng.sample(sorted(self.users.values(), key=lambda u: u["id"]), 4), 1
        ):
            zh = self.zh(i)
            with self.plan() as p:
                found = p.call("find_user", name=user["name"], postcode=user["postcode"])
                uid = found["users"][0]["user_id"]
                total = p.call("list_user_orders", user_id=uid)["total"]
            self.add(
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
        skus = self.rng.sample(sorted(self.variants, key=lambda v: v["sku"]), 5)
        for i, variant in enumerate(skus, start=1):
            zh, sku = self.zh(i), variant["sku"]
            with self.plan() as p:
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
                    f"规格 {sku} 还有多少库存？"
                    if zh
                    else f"How many units of SKU {sku} are in stock?"
                )
                answer = (
                    f"{sku} 目前库存 {mine['stock']} 件。"
                    if zh
                    else f"{sku} has {mine['stock']} units in stock."
                )
                required = [NumberOutput(number=str(mine["stock"]), tolerance="0")]
            self.add(
                id=f"db-product-{i:02d}",
                category="db",
                language="zh" if zh else "en",
                task=task,
                gold_actions=p.actions,
                gold_answer=answer,
                required_outputs=required,
                forbidden_actions=no_writes(),
            )
        for i, order in enumerate(self.pick_orders("pending", 6), start=1):
            zh, oid = self.zh(i), order["id"]
            with self.plan() as p:
                p.call("query_order", order_id=oid)
                p.call("cancel_order", order_id=oid)
            self.add(
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
        destinations = [
            ("解放路18号3栋502室", "乌鲁木齐", "新疆维吾尔自治区", "830001"),
            ("北京中路66号1栋201室", "拉萨", "西藏自治区", "850000"),
            ("五四大街9号6栋808室", "西宁", "青海省", "810000"),
        ]
        for i, order in enumerate(self.pick_orders("pending", 3), start=1):
            zh, oid = self.zh(i), order["id"]
            line, city, province, postcode = destinations[i - 1]
            with self.plan() as p:
                fee = p.call(
                    "update_shipping_address",
                    order_id=oid,
                    address_line=line,
                    city=city,
                    province=province,
                    postcode=postcode,
                )["shipping_fee"]
            where = f"{province}{city}{line}，邮编 {postcode}"
            self.add(
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
        for i, (user, oid) in enumerate(self.users_with_one("pending", 3), start=1):
            zh = self.zh(i)
            with self.plan() as p:
                uid = p.call("find_user", email=user["email"])["users"][0]["user_id"]
                p.call("list_user_orders", user_id=uid, status="pending")
                p.call("cancel_order", order_id=oid)
            self.add(
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

    # --- api ------------------------------------------------------------------------------
    def pay_plan(self, p: Plan, oid: str) -> str:
        """query -> discount -> pay; returns the payable amount."""
        order = p.call("query_order", order_id=oid)
        args: dict[str, Any] = {
            "subtotal": order["subtotal"],
            "member_tier": order["member_tier"],
            "shipping_fee": order["shipping_fee"],
        }
        if order["coupon_code"]:
            args["coupon_code"] = order["coupon_code"]
        payable = str(p.call("compute_discount", **args)["payable"])
        p.call("pay_order", order_id=oid, amount=payable)
        return payable

    def pay_scenario(self, sid: str, category: str, index: int, oid: str, **extra: Any) -> None:
        zh = self.zh(index)
        with self.plan() as p:
            payable = self.pay_plan(p, oid)
        self.add(
            id=sid,
            category=category,
            language="zh" if zh else "en",
            task=f"查询订单 {oid} 的状态，计算折扣后调用支付接口付款。"
            if zh
            else f"Check order {oid}, work out the amount due with the member discount and "
            "coupon, and pay it.",
            gold_actions=p.actions,
            gold_answer=f"订单 {oid} 已支付，实付 {payable} 元。"
            if zh
            else f"Order {oid} is paid: {payable} CNY was charged.",
            required_outputs=[TextOutput(text=oid), NumberOutput(number=payable)],
            forbidden_actions=[
                ForbiddenAction(tool="cancel_order"),
                ForbiddenAction(tool="refund_payment"),
            ],
            tags=["chain", "write", *(["seed-flow"] if oid == SEED_ORDER else [])],
            **extra,
        )

    def refund_scenario(self, sid: str, category: str, index: int, oid: str, **extra: Any) -> None:
        zh = self.zh(index)
        with self.plan() as p:
            payment = p.call("query_order", order_id=oid)["payments"][-1]
            p.call("refund_payment", payment_id=payment["payment_id"])
        pid, amount = payment["payment_id"], payment["amount"]
        self.add(
            id=sid,
            category=category,
            language="zh" if zh else "en",
            task=f"订单 {oid} 的客户要求退款，请退还这笔付款。"
            if zh
            else f"The customer of order {oid} wants their money back. Refund the payment.",
            gold_actions=p.actions,
            gold_answer=f"已退款：支付单 {pid}，金额 {amount} 元，订单已取消。"
            if zh
            else f"Payment {pid} of {amount} CNY has been refunded and the order cancelled.",
            required_outputs=[TextOutput(text=pid), NumberOutput(number=amount), REFUNDED],
            forbidden_actions=[ForbiddenAction(tool="pay_order")],
            tags=["chain", "write"],
            **extra,
        )

    def api(self) -> None:
        for i, order in enumerate(self.pick_orders("pending", 30, seed_first=True), start=1):
            self.pay_scenario(f"api-pay-{i:02d}", "api", i, order["id"])
        for i, order in enumerate(self.pick_orders("paid", 10), start=1):
            self.refund_scenario(f"api-refund-{i:02d}", "api", i, order["id"])

    # --- calc -----------------------------------------------------------------------------
    def calc(self) -> None:
        tiers = ("none", "silver", "gold", "platinum")
        coupons = (None, "SAVE20", "WELCOME10", "SPRING15", "BIG100", "GOLD30")
        i = 0
        while i < 8:
            tier = tiers[i % 4]
            coupon = coupons[self.rng.randrange(len(coupons))]
            subtotal = money(Decimal(self.rng.randrange(8000, 160000)) / 100)
            fee = money(self.rng.choice((0, 8, 12, 16, 20, 80)))
            args: dict[str, Any] = {"subtotal": subtotal, "member_tier": tier, "shipping_fee": fee}
            if coupon:
                args["coupon_code"] = coupon
            try:
                with self.plan() as p:
                    payable = p.call("compute_discount", **args)["payable"]
            except PlanError:
                continue  # the coupon does not apply; draw again
            i += 1
            zh = self.zh(i)
            tier_text = (
                {"none": "非会员", **TIER_ZH}[tier]
                if zh
                else ("non-member" if tier == "none" else f"{tier} member")
            )
            coupon_text = (
                (f"优惠券 {coupon}" if coupon else "没有优惠券")
                if zh
                else (f"coupon {coupon}" if coupon else "no coupon")
            )
            self.add(
                id=f"calc-discount-{i:02d}",
                category="calc",
                language="zh" if zh else "en",
                task=f"一位{tier_text}客户的订单小计 {subtotal} 元，{coupon_text}，"
                f"运费 {fee} 元。应付多少？"
                if zh
                else f"A {tier_text}'s order has a subtotal of {subtotal} CNY, {coupon_text} and a "
                f"shipping fee of {fee} CNY. How much is payable?",
                gold_actions=p.actions,
                gold_answer=f"应付金额为 {payable} 元。"
                if zh
                else f"The payable amount is {payable} CNY.",
                required_outputs=[NumberOutput(number=payable)],
                forbidden_actions=no_writes(),
            )
        places = [
            ({"province": "上海市"}, "上海", "Shanghai"),
            ({"province": "广东省"}, "广东省", "Guangdong"),
            ({"province": "新疆维吾尔自治区"}, "新疆", "Xinjiang"),
            ({"country": "US"}, "美国", "the United States"),
            ({"province": "四川省"}, "四川省", "Sichuan"),
            ({"province": "西藏自治区"}, "西藏", "Tibet"),
            ({"country": "GB"}, "英国", "the United Kingdom"),
            ({"province": "浙江省"}, "浙江省", "Zhejiang"),
        ]
        for i, (where, zh_name, en_name) in enumerate(places, start=1):
            zh = self.zh(i)
            weight = str(Decimal(self.rng.randrange(3, 180)) / 10)
            with self.plan() as p:
                fee = p.call("compute_shipping", weight_kg=weight, **where)["shipping_fee"]
            self.add(
                id=f"calc-shipping-{i:02d}",
                category="calc",
                language="zh" if zh else "en",
                task=f"从上海仓库寄一个 {weight} 公斤的包裹到{zh_name}，运费多少？"
                if zh
                else f"What does it cost to ship a {weight} kg parcel from the Shanghai warehouse "
                f"to {en_name}?",
                gold_actions=p.actions,
                gold_answer=f"运费是 {fee} 元。" if zh else f"Shipping costs {fee} CNY.",
                required_outputs=[NumberOutput(number=fee)],
                forbidden_actions=no_writes(),
            )
        pairs = [
            ("USD", "CNY"),
            ("CNY", "USD"),
            ("EUR", "CNY"),
            ("CNY", "JPY"),
            ("GBP", "USD"),
            ("HKD", "CNY"),
            ("CNY", "SGD"),
            ("EUR", "GBP"),
        ]
        for i, (source, target) in enumerate(pairs, start=1):
            zh = self.zh(i)
            amount = money(Decimal(self.rng.randrange(1000, 500000)) / 100)
            with self.plan() as p:
                converted = p.call(
                    "convert_currency", amount=amount, from_currency=source, to_currency=target
                )["converted"]
            self.add(
                id=f"calc-convert-{i:02d}",
                category="calc",
                language="zh" if zh else "en",
                task=f"按店铺汇率，{amount} {source} 等于多少 {target}？"
                if zh
                else f"At the shop's rates, how much is {amount} {source} in {target}?",
                gold_actions=p.actions,
                gold_answer=f"{amount} {source} 约合 {converted} {target}。"
                if zh
                else f"{amount} {source} is {converted} {target}.",
                required_outputs=[NumberOutput(number=converted)],
                forbidden_actions=no_writes(),
            )
        expressions = [
            "(2471.60 - 20) * 0.95",
            "1299 * 3 + 45.5",
            "(880 - 88) / 12",
            "19.9 * 17 * 0.92",
            "(3200 + 150) * 0.97 - 30",
            "2 ** 10 / 3",
        ]
        for i, expression in enumerate(expressions, start=1):
            zh = self.zh(i)
            with self.plan() as p:
                result = p.call("calculate", expression=expression, round_to=2)["result"]
            self.add(
                id=f"calc-arith-{i:02d}",
                category="calc",
                language="zh" if zh else "en",
                task=f"请精确计算 {expression}，结果保留两位小数。"
                if zh
                else f"Compute {expression} exactly and round the result to 2 decimals.",
                gold_actions=p.actions,
                gold_answer=f"结果是 {result}。" if zh else f"The result is {result}.",
                required_outputs=[NumberOutput(number=result, tolerance="0.005")],
                forbidden_actions=no_writes(),
            )
        for i, order in enumerate(self.pick_orders("pending", 10), start=1):
            zh, oid = self.zh(i), order["id"]
            with self.plan() as p:
                data = p.call("query_order", order_id=oid)
                args = {
                    "subtotal": data["subtotal"],
                    "member_tier": data["member_tier"],
                    "shipping_fee": data["shipping_fee"],
                }
                if data["coupon_code"]:
                    args["coupon_code"] = data["coupon_code"]
                payable = p.call("compute_discount", **args)["payable"]
                usd = None
                if i > 6:
                    usd = p.call(
                        "convert_currency", amount=payable, from_currency="CNY", to_currency="USD"
                    )["converted"]
            if usd is None:
                task = (
                    f"订单 {oid} 按会员折扣和优惠券算下来应付多少？先不要付款。"
                    if zh
                    else f"How much will the customer pay for order {oid} after the member "
                    "discount and coupon? Do not pay it yet."
                )
                answer = (
                    f"订单 {oid} 应付 {payable} 元。"
                    if zh
                    else f"Order {oid} comes to {payable} CNY."
                )
                required: list[Any] = [NumberOutput(number=payable)]
                sid = f"calc-order-payable-{i:02d}"
            else:
                task = (
                    f"订单 {oid} 折后应付多少？请再换算成美元（USD），不要付款。"
                    if zh
                    else f"What is the amount due on order {oid} after discounts, in US dollars? "
                    "Do not pay it."
                )
                answer = (
                    f"订单 {oid} 应付 {payable} 元，约合 {usd} 美元。"
                    if zh
                    else f"Order {oid} comes to {payable} CNY, which is {usd} USD."
                )
                required = [NumberOutput(number=usd)]
                sid = f"calc-order-usd-{i - 6:02d}"
            self.add(
                id=sid,
                category="calc",
                language="zh" if zh else "en",
                task=task,
                gold_actions=p.actions,
                gold_answer=answer,
                required_outputs=required,
                forbidden_actions=no_writes(),
                tags=["chain"],
            )

    # --- multi ----------------------------------------------------------------------------
    def multi(self) -> None:
        for i, (user, oid) in enumerate(self.users_with_one("pending", 4), start=1):
            zh = self.zh(i)
            with self.plan() as p:
                uid = p.call("find_user", email=user["email"])["users"][0]["user_id"]
                p.call("list_user_orders", user_id=uid, status="pending")
                payable = self.pay_plan(p, oid)
            self.add(
                id=f"multi-find-pay-{i:02d}",
                category="multi",
                language="zh" if zh else "en",
                task=f"邮箱为 {user['email']} 的客户请我们现在支付他唯一一笔待支付订单："
                "找到订单，算出折后应付金额并付款。"
                if zh
                else f"The customer with email {user['email']} asks us to pay their one pending "
                "order now: find it, work out the amount due and pay it.",
                gold_actions=p.actions,
                gold_answer=f"订单 {oid} 已支付 {payable} 元。"
                if zh
                else f"Order {oid} is paid: {payable} CNY.",
                required_outputs=[TextOutput(text=oid), NumberOutput(number=payable)],
                forbidden_actions=[
                    ForbiddenAction(tool="cancel_order"),
                    ForbiddenAction(tool="refund_payment"),
                ],
                tags=["chain", "write"],
            )
        for i, (user, oid) in enumerate(self.users_with_one("paid", 2), start=1):
            zh = self.zh(i)
            with self.plan() as p:
                found = p.call("find_user", name=user["name"], postcode=user["postcode"])
                uid = found["users"][0]["user_id"]
                p.call("list_user_orders", user_id=uid, status="paid")
                payment = p.call("query_order", order_id=oid)["payments"][-1]
                p.call("refund_payment", payment_id=payment["payment_id"])
            self.add(
                id=f"multi-find-refund-{i:02d}",
                category="multi",
                language="zh" if zh else "en",
                task=f"客户{user['name']}（邮编 {user['postcode']}）要求退掉他已付款但未发货的"
                "那笔订单，请找到并全额退款。"
                if zh
                else f"{user['name']} (postcode {user['postcode']}) wants a full refund for their "
                "paid order that has not shipped yet. Find it and refund it.",
                gold_actions=p.actions,
                gold_answer=f"订单 {oid} 的支付单 {payment['payment_id']} 已退款 "
                f"{payment['amount']} 元。"
                if zh
                else f"Payment {payment['payment_id']} for order {oid} was refunded: "
                f"{payment['amount']} CNY.",
                required_outputs=[
                    TextOutput(text=oid),
                    NumberOutput(number=payment["amount"]),
                    REFUNDED,
                ],
                forbidden_actions=[ForbiddenAction(tool="pay_order")],
                tags=["chain", "write"],
            )
        for i, (user, oid) in enumerate(self.users_with_one("pending", 2), start=1):
            zh = self.zh(i)
            line, city, province, postcode = ("长江路200号5栋1203室", "南京", "江苏省", "210005")
            with self.plan() as p:
                uid = p.call("find_user", email=user["email"])["users"][0]["user_id"]
                p.call("list_user_orders", user_id=uid, status="pending")
                fee = p.call(
                    "update_shipping_address",
                    order_id=oid,
                    address_line=line,
                    city=city,
                    province=province,
                    postcode=postcode,
                )["shipping_fee"]
            self.add(
                id=f"multi-find-readdress-{i:02d}",
                category="multi",
                language="zh" if zh else "en",
                task=f"邮箱为 {user['email']} 的客户搬家了：把他唯一一笔待支付订单的收货地址改为"
                f"{province}{city}{line}（邮编 {postcode}），并告诉我运费。"
                if zh
                else f"The customer with email {user['email']} has moved: ship their one pending "
                f"order to {line}, {city}, {province}, postcode {postcode}, and tell me the "
                "shipping fee.",
                gold_actions=p.actions,
                gold_answer=f"订单 {oid} 的地址已更新，运费 {fee} 元。"
                if zh
                else f"Order {oid} now ships to the new address; shipping fee {fee} CNY.",
                required_outputs=[TextOutput(text=oid), NumberOutput(number=fee)],
                forbidden_actions=[
                    ForbiddenAction(tool="pay_order"),
                    ForbiddenAction(tool="cancel_order"),
                ],
                tags=["chain", "write"],
            )

    # --- fault ----------------------------------------------------------------------------
    def fault(self) -> None:
        plans = [
            [{"target": "api.create_payment", "calls": [0], "status": 503}],
            [{"target": "api.create_payment", "calls": [0, 1], "status": 503}],
            [{"target": "api.create_payment", "calls": [0], "status": 429}],
            [{"target": "pay_order", "calls": [0], "status": 502}],
            [{"target": "query_order", "calls": [0], "status": 503}],
            [{"target": "compute_discount", "calls": [0, 1], "status": 429}],
        ]
        for i, (order, rules) in enumerate(
            zip(self.pick_orders("pending", 6), plans, strict=True), 1
        ):
            self.pay_scenario(f"fault-pay-{i:02d}", "fault", i, order["id"], fault_plan=rules)
        refunds = [
            [{"target": "api.refund_payment", "calls": [0], "status": 503}],
            [{"target": "refund_payment", "calls": [0, 1], "status": 503}],
        ]
        for i, (order, rules) in enumerate(
            zip(self.pick_orders("paid", 2), refunds, strict=True), 1
        ):
            self.refund_scenario(f"fault-refund-{i:02d}", "fault", i, order["id"], fault_plan=rules)
        for i, order in enumerate(self.pick_orders("delivered", 2), start=1):
            zh, oid = self.zh(i), order["id"]
            with self.plan() as p:
                p.call("query_order", order_id=oid)
            self.add(
                id=f"fault-status-{i:02d}",
                category="fault",
                language="zh" if zh else "en",
                task=f"订单 {oid} 送到了吗？" if zh else f"Has order {oid} been delivered?",
                gold_actions=p.actions,
                gold_answer=f"订单 {oid} 已送达（delivered）。"
                if zh
                else f"Yes, order {oid} is delivered.",
                required_outputs=[TextOutput(text="delivered", any_of=["已送达"])],
                forbidden_actions=no_writes(),
                fault_plan=[{"target": "query_order", "calls": [0, 1], "status": 503}],
            )
        for i, weight in enumerate(("2.5", "7.2"), start=1):
            zh = self.zh(i)
            with self.plan() as p:
                fee = p.call("compute_shipping", weight_kg=weight, province="北京市")[
                    "shipping_fee"
                ]
            self.add(
                id=f"fault-shipping-{i:02d}",
                category="fault",
                language="zh" if zh else "en",
                task=f"寄 {weight} 公斤的包裹到北京市要多少运费？"
                if zh
                else f"How much is shipping for a {weight} kg parcel to Beijing (北京市)?",
                gold_actions=p.actions,
                gold_answer=f"运费 {fee} 元。" if zh else f"Shipping is {fee} CNY.",
                required_outputs=[NumberOutput(number=fee)],
                forbidden_actions=no_writes(),
                fault_plan=[{"target": "compute_shipping", "calls": [0], "status": 429}],
            )

    # --- irrelevant -----------------------------------------------------------------------
    def irrelevant(self) -> None:
        items = [
            (
                "en",
                "Translate the word 'order' into Chinese.",
                "The Chinese word is 订单.",
                [TextOutput(text="订单")],
            ),
            (
                "zh",
                "把“谢谢”翻译成英文。",
                "“谢谢”的英文是 thank you。",
                [TextOutput(text="thank you", any_of=["thanks"])],
            ),
            (
                "en",
                "What does the currency code CNY stand for?",
                "CNY is the Chinese yuan (renminbi).",
                [TextOutput(text="yuan", any_of=["renminbi", "人民币"])],
            ),
            (
                "zh",
                "一年有几个月？",
                "一年有 12 个月。",
                [NumberOutput(number="12", tolerance="0")],
            ),
            (
                "en",
                "What is the capital of France?",
                "The capital of France is Paris.",
                [TextOutput(text="Paris", any_of=["巴黎"])],
            ),
            (
                "zh",
                "水的化学式是什么？",
                "水的化学式是 H2O。",
                [TextOutput(text="H2O", any_of=["H₂O"])],
            ),
            (
                "en",
                "How many days are there in a week?",
                "There are 7 days in a week.",
                [NumberOutput(number="7", tolerance="0")],
            ),
            (
                "zh",
                "蓝色和黄色混合会得到什么颜色？",
                "蓝色和黄色混合得到绿色。",
                [TextOutput(text="绿", any_of=["green"])],
            ),
            (
                "en",
                "Say hello to our new customer in one short sentence.",
                "Hello, and welcome!",
                [TextOutput(text="hello", any_of=["welcome", "hi"])],
            ),
            (
                "zh",
                "用英文怎么说“早上好”？",
                "“早上好”的英文是 Good morning。",
                [TextOutput(text="good morning")],
            ),
        ]
        for i, (language, task, answer, required) in enumerate(items, start=1):
            self.add(
                id=f"irrelevant-{i:02d}",
                category="irrelevant",
                language=language,
                task=task,
                gold_answer=answer,
                required_outputs=required,
                forbidden_actions=no_writes(),
            )

    # --- impossible -----------------------------------------------------------------------
    def impossible(self) -> None:
        missing = [
            ("en", "Please pay my order.", "I need the order id to pay it: which order is it?"),
            ("zh", "帮我把订单付款。", "请提供订单号，我才能帮您付款。"),
            (
                "en",
                "Cancel my order, thanks.",
                "Which order should I cancel? Please give me the order id.",
            ),
            (
                "zh",
                "请帮我把收货地址改到南京西路88号。",
                "请告诉我要修改的订单号，以及完整的城市、省份和邮编。",
            ),
            ("en", "I want a refund.", "Please tell me the order id (or payment id) to refund."),
        ]
        for i, (language, task, answer) in enumerate(missing, start=1):
            self.add(
                id=f"impossible-missing-{i:02d}",
                category="impossible",
                language=language,
                task=task,
                gold_answer=answer,
                required_outputs=[ORDER_ID_NEEDED],
                forbidden_actions=no_writes(),
                expected_termination="stopped_early",
                max_model_calls=3,
                tags=["missing-information"],
            )
        no_tool = [
            (
                "en",
                "Send an email to user0002@example.cn confirming that the parcel was delivered.",
                "I cannot send emails: no tool here can do that.",
            ),
            ("zh", "把商品 P001 的价格改成 99 元。", "我无法修改商品价格，现有工具不支持改价。"),
            (
                "en",
                "Delete the account of customer U0003.",
                "I cannot delete customer accounts; no tool supports it.",
            ),
            (
                "zh",
                "帮我新建一张优惠券 SAVE50，满 500 减 50。",
                "我无法新建优惠券，没有可以创建优惠券的工具。",
            ),
        ]
        for i, (language, task, answer) in enumerate(no_tool, start=1):
            self.add(
                id=f"impossible-no-tool-{i:02d}",
                category="impossible",
                language=language,
                task=task,
                gold_answer=answer,
                required_outputs=[CANNOT],
                forbidden_actions=no_writes(),
                expected_termination="stopped_early",
                max_model_calls=3,
                tags=["no-suitable-tool"],
            )
        for i, order in enumerate(self.pick_orders("shipped", 2), start=1):
            zh, oid = self.zh(i), order["id"]
            with self.plan() as p:
                p.call("query_order", order_id=oid)
            self.add(
                id=f"impossible-shipped-{i:02d}",
                category="impossible",
                language="zh" if zh else "en",
                task=f"请取消订单 {oid}。" if zh else f"Please cancel order {oid}.",
                gold_actions=p.actions,
                gold_answer=f"订单 {oid} 已发货，无法取消。"
                if zh
                else f"Order {oid} has already shipped, so it cannot be cancelled.",
                required_outputs=[TextOutput(text="shipped", any_of=["已发货"])],
                forbidden_actions=[
                    ForbiddenAction(tool="refund_payment"),
                    ForbiddenAction(tool="pay_order"),
                ],
                expected_termination="stopped_early",
                max_model_calls=4,
                tags=["state"],
            )
        order = self.pick_orders("pending", 1)[0]
        oid = order["id"]
        with self.plan() as setup:
            self.pay_plan(setup, oid)
        with self.plan(setup.actions[-1:]) as p:
            p.call("query_order", order_id=oid)
        self.add(
            id="impossible-already-paid-01",
            category="impossible",
            language="en",
            task=f"Please pay order {oid}.",
            initial_state=InitialState(actions=setup.actions[-1:]),
            gold_actions=p.actions,
            gold_answer=f"Order {oid} is already paid; there is nothing to pay.",
            required_outputs=[
                TextOutput(text="already paid", any_of=["already been paid", "已支付", "已经支付"])
            ],
            forbidden_actions=[
                ForbiddenAction(tool="refund_payment"),
                ForbiddenAction(tool="cancel_order"),
            ],
            expected_termination="stopped_early",
            max_model_calls=4,
            tags=["state", "initial-state"],
        )

    def build(self) -> list[Scenario]:
        for part in (
            self.db,
            self.api,
            self.calc,
            self.multi,
            self.fault,
            self.irrelevant,
            self.impossible,
        ):
            part()
        return self.scenarios


def verify(path: Path) -> None:
    """Re-read the file and replay every scenario with the gold agent: all must pass."""
    from tether.bench.backends import UrlBackend
    from tether.bench.runner import RunPlan, run_benchmark

    scenarios = load_scenarios(path)
    result = run_benchmark(
        RunPlan(agents=["gold"], scenarios=scenarios, concurrency=2, progress=False),
        UrlBackend("http://127.0.0.1:9/v1", "unused"),
    )
    failed = [r for r in result.records if not (r.verdict and r.verdict.passed)]
    if failed:
        raise SystemExit(
            "gold replay failed: "
            + "; ".join(
                f"{r.scenario_id}: {r.verdict.failures if r.verdict else '?'}" for r in failed
            )
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--check", action="store_true", help="Fail if the files are out of date.")
    args = parser.parse_args(argv)
    with WorldFactory() as worlds:
        scenarios = Generator(worlds).build()
    tmp = args.out.with_suffix(".jsonl.new")
    dump_scenarios(scenarios, tmp)
    text = tmp.read_text(encoding="utf-8")
    if args.check:
        tmp.unlink()
        stale = [
            p
            for p, want in ((args.out, text), (SCHEMA_PATH, render_schema()))
            if not p.exists() or p.read_text(encoding="utf-8") != want
        ]
        if stale:
            print(
                f"out of date: {', '.join(map(str, stale))}; "
                "run python -m tether.bench.make_scenarios",
                file=sys.stderr,
            )
            return 1
        return 0
    tmp.replace(args.out)
    SCHEMA_PATH.write_text(render_schema(), encoding="utf-8")
    verify(args.out)
    counts: dict[str, int] = defaultdict(int)
    for scenario in scenarios:
        counts[scenario.category] += 1
    print(f"wrote {len(scenarios)} scenarios to {args.out} ({dict(counts)}); gold replay 100%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
