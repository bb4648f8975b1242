"""Calculator scenarios: discounts, shipping, currency, arithmetic, order totals."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from tether_bench.gen.base import (
    TIER_ZH,
    Generator,
    PlanError,
    money,
    no_writes,
)
from tether_bench.scenarios import NumberOutput


def calc_discount(g: Generator) -> None:
    """Payable for a tier, coupon and fee (coupons that do not apply are redrawn)."""
    tiers = ("none", "silver", "gold", "platinum")
    coupons = (None, "SAVE20", "WELCOME10", "SPRING15", "BIG100", "GOLD30")
    i = 0
    while i < 8:
        tier = tiers[i % 4]
        coupon = coupons[g.rng.randrange(len(coupons))]
        subtotal = money(Decimal(g.rng.randrange(8000, 160000)) / 100)
        fee = money(g.rng.choice((0, 8, 12, 16, 20, 80)))
        args: dict[str, Any] = {"subtotal": subtotal, "member_tier": tier, "shipping_fee": fee}
        if coupon:
            args["coupon_code"] = coupon
        try:
            with g.plan() as p:
                payable = p.call("compute_discount", **args)["payable"]
        except PlanError:
            continue  # the coupon does not apply; draw again
        i += 1
        zh = g.zh(i)
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
        g.add(
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


def calc_shipping(g: Generator) -> None:
    """Shipping fee for a weight and destination."""
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
        zh = g.zh(i)
        weight = str(Decimal(g.rng.randrange(3, 180)) / 10)
        with g.plan() as p:
            fee = p.call("compute_shipping", weight_kg=weight, **where)["shipping_fee"]
        g.add(
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


def calc_convert(g: Generator) -> None:
    """Currency conversion at the shop's rates."""
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
        zh = g.zh(i)
        amount = money(Decimal(g.rng.randrange(1000, 500000)) / 100)
        with g.plan() as p:
            converted = p.call(
                "convert_currency", amount=amount, from_currency=source, to_currency=target
            )["converted"]
        g.add(
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


def calc_arith(g: Generator) -> None:
    """Exact arithmetic, rounded to 2 decimals."""
    expressions = [
        "(2471.60 - 20) * 0.95",
        "1299 * 3 + 45.5",
        "(880 - 88) / 12",
        "19.9 * 17 * 0.92",
        "(3200 + 150) * 0.97 - 30",
        "2 ** 10 / 3",
    ]
    for i, expression in enumerate(expressions, start=1):
        zh = g.zh(i)
        with g.plan() as p:
            result = p.call("calculate", expression=expression, round_to=2)["result"]
        g.add(
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


def calc_order(g: Generator) -> None:
    """An order's payable (and in USD), without paying it."""
    for i, order in enumerate(g.pick_orders("pending", 10), start=1):
        zh, oid = g.zh(i), order["id"]
        with g.plan() as p:
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
                f"订单 {oid} 应付 {payable} 元。" if zh else f"Order {oid} comes to {payable} CNY."
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
        g.add(
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


TEMPLATES = (calc_discount, calc_shipping, calc_convert, calc_arith, calc_order)
