"""Payment API scenarios: pay (query, discount, pay) and refund flows."""

from __future__ import annotations

from typing import Any

from tether_bench.gen.base import (
    REFUNDED,
    SEED_ORDER,
    Generator,
    Plan,
)
from tether_bench.scenarios import ForbiddenAction, NumberOutput, TextOutput


def pay_plan(g: Generator, p: Plan, oid: str) -> str:
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


def pay_scenario(g: Generator, sid: str, category: str, index: int, oid: str, **extra: Any) -> None:
    """Pay an order: query, discount, pay (also the fault category's base)."""
    zh = g.zh(index)
    with g.plan() as p:
        payable = pay_plan(g, p, oid)
    g.add(
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


def refund_scenario(
    g: Generator, sid: str, category: str, index: int, oid: str, **extra: Any
) -> None:
    """Refund a paid order's payment."""
    zh = g.zh(index)
    with g.plan() as p:
        payment = p.call("query_order", order_id=oid)["payments"][-1]
        p.call("refund_payment", payment_id=payment["payment_id"])
    pid, amount = payment["payment_id"], payment["amount"]
    g.add(
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


def api(g: Generator) -> None:
    """Thirty payments (the seed's order first) and ten refunds."""
    for i, order in enumerate(g.pick_orders("pending", 30, seed_first=True), start=1):
        pay_scenario(g, f"api-pay-{i:02d}", "api", i, order["id"])
    for i, order in enumerate(g.pick_orders("paid", 10), start=1):
        refund_scenario(g, f"api-refund-{i:02d}", "api", i, order["id"])


TEMPLATES = (api,)
