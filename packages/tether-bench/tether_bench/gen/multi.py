"""Multi-step scenarios: find the customer, then the order, then act on it."""

from __future__ import annotations

from tether_bench.gen.api import pay_plan
from tether_bench.gen.base import (
    REFUNDED,
    Generator,
)
from tether_bench.scenarios import ForbiddenAction, NumberOutput, TextOutput


def multi_find_pay(g: Generator) -> None:
    """Find a customer's one pending order and pay it (five calls)."""
    for i, (user, oid) in enumerate(g.users_with_one("pending", 4), start=1):
        zh = g.zh(i)
        with g.plan() as p:
            uid = p.call("find_user", email=user["email"])["users"][0]["user_id"]
            p.call("list_user_orders", user_id=uid, status="pending")
            payable = pay_plan(g, p, oid)
        g.add(
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


def multi_find_refund(g: Generator) -> None:
    """Find a customer's paid order and refund it."""
    for i, (user, oid) in enumerate(g.users_with_one("paid", 2), start=1):
        zh = g.zh(i)
        with g.plan() as p:
            found = p.call("find_user", name=user["name"], postcode=user["postcode"])
            uid = found["users"][0]["user_id"]
            p.call("list_user_orders", user_id=uid, status="paid")
            payment = p.call("query_order", order_id=oid)["payments"][-1]
            p.call("refund_payment", payment_id=payment["payment_id"])
        g.add(
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


def multi_find_readdress(g: Generator) -> None:
    """Find a customer's pending order and change its address."""
    for i, (user, oid) in enumerate(g.users_with_one("pending", 2), start=1):
        zh = g.zh(i)
        line, city, province, postcode = ("长江路200号5栋1203室", "南京", "江苏省", "210005")
        with g.plan() as p:
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
        g.add(
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


TEMPLATES = (multi_find_pay, multi_find_refund, multi_find_readdress)
