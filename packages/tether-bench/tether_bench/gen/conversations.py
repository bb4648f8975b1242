"""Conversation families: several user messages on one thread, answered by the simulated user
(:mod:`tether_bench.user`), judged on the final world state and every reply.

* ``clarify``: the task asks for a write but leaves out which order ("please pay my order").
  The right reply asks the user, who answers in the next message ("It's order ORD-..."); then
  the write is made on that order. A write on a made-up order is rejected by the operator or
  changes the wrong order, and a reply that does not ask ends the conversation (the user has
  nothing to answer), so both fail the judge.
* ``multiturn``: the second message refers to the first one's results: "what would order X
  cost me now?", then "good, pay it". The first reply must state the amount due, the second
  pay exactly that on that order; nothing in the second message names the order or the amount.

Sources for the rates: in <real-runs>, every one of the 364 successful conversations that made
a write asked the user a question before its first write, and a successful conversation has a
median of 5 user messages. How often the simulated model asks instead of inventing a missing
value is the persona's ``invent_rate`` (:mod:`tether_bench.simulator.personas`), the same rate
the single-message ``impossible`` family uses.
"""

from __future__ import annotations

from tether_bench.gen.api import pay_plan
from tether_bench.gen.base import CANCELLED, ORDER_ID_NEEDED, Generator
from tether_bench.scenarios import ForbiddenAction, NumberOutput, TextOutput, UserTurn

CLARIFY_COUNT = 4
"""Scenarios per clarify kind (pay, cancel)."""
REFER_COUNT = 6


def order_answer(oid: str, zh: bool) -> str:
    """The user's answer when asked which order: the id and nothing else."""
    return f"是订单 {oid}。" if zh else f"It's order {oid}."


def clarify_pay(g: Generator) -> None:
    """Pay my order (which one is not said): ask, hear the id, then query, discount, pay."""
    for i, order in enumerate(g.pick_orders("pending", CLARIFY_COUNT), start=1):
        zh, oid = g.zh(i), order["id"]
        with g.plan() as p:
            payable = pay_plan(g, p, oid)
        task = (
            "请帮我把待支付的订单付掉，按会员折扣和优惠券算出应付金额。"
            if zh
            else "Please pay my pending order, with the member discount and coupon applied."
        )
        g.add(
            id=f"clarify-pay-{i:02d}",
            category="clarify",
            language="zh" if zh else "en",
            task=task,
            turns=[
                UserTurn(message=task, plan_end=len(p.actions)),
                UserTurn(
                    message=order_answer(oid, zh),
                    answers=ORDER_ID_NEEDED,
                    plan_end=len(p.actions),
                ),
            ],
            gold_actions=p.actions,
            gold_answer=f"订单 {oid} 已支付，实付 {payable} 元。"
            if zh
            else f"Order {oid} is paid: {payable} CNY was charged.",
            required_outputs=[TextOutput(text=oid), NumberOutput(number=payable)],
            forbidden_actions=[
                ForbiddenAction(tool="cancel_order"),
                ForbiddenAction(tool="refund_payment"),
            ],
            tags=["conversation", "clarify", "write"],
        )


def clarify_cancel(g: Generator) -> None:
    """Cancel my order (which one is not said): ask, hear the id, cancel it."""
    for i, order in enumerate(g.pick_orders("pending", CLARIFY_COUNT), start=1):
        zh, oid = g.zh(i), order["id"]
        with g.plan() as p:
            p.call("cancel_order", order_id=oid)
        task = (
            "我不想要那个订单了，请帮我取消。"
            if zh
            else "I don't want my order any more, please cancel it."
        )
        g.add(
            id=f"clarify-cancel-{i:02d}",
            category="clarify",
            language="zh" if zh else "en",
            task=task,
            turns=[
                UserTurn(message=task, plan_end=1),
                UserTurn(message=order_answer(oid, zh), answers=ORDER_ID_NEEDED, plan_end=1),
            ],
            gold_actions=p.actions,
            gold_answer=f"订单 {oid} 已取消。" if zh else f"Order {oid} is cancelled.",
            required_outputs=[TextOutput(text=oid), CANCELLED],
            forbidden_actions=[
                ForbiddenAction(tool="pay_order"),
                ForbiddenAction(tool="refund_payment"),
            ],
            tags=["conversation", "clarify", "write"],
        )


def total_then_pay(g: Generator) -> None:
    """What would order X cost now? Then: good, pay it (the amount and order from message 1)."""
    for i, order in enumerate(g.pick_orders("pending", REFER_COUNT), start=1):
        zh, oid = g.zh(i), order["id"]
        with g.plan() as p:
            payable = pay_plan(g, p, oid)
        task = (
            f"订单 {oid} 现在按会员折扣和优惠券算要付多少钱？先别付款。"
            if zh
            else f"How much would order {oid} cost me now, with the member discount and coupon? "
            "Don't pay yet."
        )
        g.add(
            id=f"multiturn-total-pay-{i:02d}",
            category="multiturn",
            language="zh" if zh else "en",
            task=task,
            turns=[
                UserTurn(message=task, plan_end=2, outputs=[NumberOutput(number=payable)]),
                UserTurn(message="好的，现在付款吧。" if zh else "Good, pay it now.", plan_end=3),
            ],
            gold_actions=p.actions,
            gold_answer=f"订单 {oid} 已支付，实付 {payable} 元。"
            if zh
            else f"Order {oid} is paid: {payable} CNY was charged.",
            required_outputs=[TextOutput(text=oid), NumberOutput(number=payable)],
            forbidden_actions=[
                ForbiddenAction(tool="cancel_order"),
                ForbiddenAction(tool="refund_payment"),
            ],
            tags=["conversation", "refers-back", "write"],
        )


TEMPLATES = (clarify_pay, clarify_cancel, total_then_pay)
