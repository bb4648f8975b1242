"""Fault scenarios: the world fails some calls (HTTP 5xx/429), by a fault plan."""

from __future__ import annotations

from tether_bench.gen.api import pay_scenario, refund_scenario
from tether_bench.gen.base import (
    Generator,
    no_writes,
)
from tether_bench.scenarios import NumberOutput, TextOutput


def fault_pay_refund(g: Generator) -> None:
    """Payments and refunds whose API calls fail first."""
    plans = [
        [{"target": "api.create_payment", "calls": [0], "status": 503}],
        [{"target": "api.create_payment", "calls": [0, 1], "status": 503}],
        [{"target": "api.create_payment", "calls": [0], "status": 429}],
        [{"target": "pay_order", "calls": [0], "status": 502}],
        [{"target": "query_order", "calls": [0], "status": 503}],
        [{"target": "compute_discount", "calls": [0, 1], "status": 429}],
    ]
    for i, (order, rules) in enumerate(zip(g.pick_orders("pending", 6), plans, strict=True), 1):
        pay_scenario(g, f"fault-pay-{i:02d}", "fault", i, order["id"], fault_plan=rules)
    refunds = [
        [{"target": "api.refund_payment", "calls": [0], "status": 503}],
        [{"target": "refund_payment", "calls": [0, 1], "status": 503}],
    ]
    for i, (order, rules) in enumerate(zip(g.pick_orders("paid", 2), refunds, strict=True), 1):
        refund_scenario(g, f"fault-refund-{i:02d}", "fault", i, order["id"], fault_plan=rules)


def fault_status(g: Generator) -> None:
    """A status lookup that fails twice first."""
    for i, order in enumerate(g.pick_orders("delivered", 2), start=1):
        zh, oid = g.zh(i), order["id"]
        with g.plan() as p:
            p.call("query_order", order_id=oid)
        g.add(
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


def fault_shipping(g: Generator) -> None:
    """A shipping quote that is rate-limited once."""
    for i, weight in enumerate(("2.5", "7.2"), start=1):
        zh = g.zh(i)
        with g.plan() as p:
            fee = p.call("compute_shipping", weight_kg=weight, province="北京市")["shipping_fee"]
        g.add(
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


TEMPLATES = (fault_pay_refund, fault_status, fault_shipping)
