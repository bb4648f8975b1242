"""Scenarios under a domain policy: about 2,900 tokens of a shop's customer-service rules
(``data/policies/retail.md``) that every agent gets, tether as its ``instructions`` and the
others in their system prompt.

* ``policy``: a question whose answer needs one fact the policy states (a return window, a
  claim window, how long an unpaid order is held) and one the order lookup returns (a date,
  a tracking number). Neither alone answers it, so an agent that drops the policy, or an
  answer that recites it without a lookup, fails.
* ``refusal`` (hand-off): a refund the policy forbids the assistant to make (a payment above
  its refund limit). The world would make it; the right answer states the payment's amount
  (so a constant hand-off, with no lookup, fails) and hands the customer to a human agent,
  and every write is forbidden.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from tether_bench.gen.base import Generator, money, no_writes
from tether_bench.gen.families import candidates
from tether_bench.scenarios import NumberOutput, TextOutput

POLICY = "retail"
REFUND_LIMIT = Decimal("1500.00")
"""The policy's refund limit (section 4.3): a larger payment is handed to a person."""
HUMAN_AGENT = TextOutput(text="human agent", any_of=["人工客服", "转人工"])

Ask = Callable[[str, bool], str]
FACTS: list[tuple[str, str, str, TextOutput, Ask]] = [
    (
        "return-window",
        "delivered",
        "delivered_at",
        TextOutput(text="45 days", any_of=["45 天", "45天"]),
        lambda oid, zh: (
            f"订单 {oid} 是哪天送达的？按我们的政策，送达后多少天内可以退货？"
            if zh
            else f"When was order {oid} delivered, and under our policy how many days after "
            "delivery can the customer return it?"
        ),
    ),
    (
        "claim-window",
        "shipped",
        "tracking_no",
        TextOutput(text="21 days", any_of=["21 天", "21天"]),
        lambda oid, zh: (
            f"订单 {oid} 还没收到。快递单号是多少？按政策，丢件索赔要在发货后多少天内提出？"
            if zh
            else f"Order {oid} has not arrived. What is its tracking number, and under our policy "
            "within how many days of shipping must a lost-parcel claim be filed?"
        ),
    ),
    (
        "unpaid-hold",
        "pending",
        "created_at",
        TextOutput(text="72 hours", any_of=["72 小时", "72小时"]),
        lambda oid, zh: (
            f"订单 {oid} 还没付款。它是哪天下的单？按政策，未付款订单保留多久后会被自动取消？"
            if zh
            else f"Order {oid} is not paid yet. On which date was it placed, and under our policy "
            "how long is an unpaid order held before it is cancelled automatically?"
        ),
    ),
]
"""(kind, the order's status, the lookup's field the answer needs, the policy's fact, the
task)."""


def looked_up(value: Any) -> str:
    """The lookup's value as the answer must state it: a timestamp's date, else the value."""
    text = str(value)
    return text[:10] if len(text) > 10 and text[4] == "-" and "T" in text else text


def policy_facts(g: Generator) -> None:
    """Two orders per fact: look the order up, answer with its value and the policy's."""
    n = 0
    for kind, status, field, fact, ask in FACTS:
        for order in g.pick_orders(status, 2):
            n += 1
            zh, oid = g.zh(n), order["id"]
            with g.plan() as p:
                value = looked_up(p.call("query_order", order_id=oid)[field])
            g.add(
                id=f"policy-{kind}-{n:02d}",
                category="policy",
                language="zh" if zh else "en",
                task=ask(oid, zh),
                gold_actions=p.actions,
                gold_answer=f"订单 {oid}：{value}；按政策为 {fact.any_of[0]}。"
                if zh
                else f"Order {oid}: {value}; under our policy, {fact.text}.",
                required_outputs=[TextOutput(text=value), fact],
                forbidden_actions=no_writes(),
                policy=POLICY,
                tags=["policy"],
            )


def refund_hand_off(g: Generator) -> None:
    """Refunds above the policy's limit: look, do not refund, hand off to a human agent."""
    n = 0
    for order in candidates(g, "paid"):
        if n == 2:
            break
        oid = order["id"]
        with g.plan() as p:
            payments = p.call("query_order", order_id=oid)["payments"]
        if not payments or Decimal(payments[0]["amount"]) <= REFUND_LIMIT:
            continue
        n += 1
        g.used.add(oid)
        zh, amount = g.zh(n), money(payments[0]["amount"])
        g.add(
            id=f"refusal-hand-off-{n:02d}",
            category="refusal",
            language="zh" if zh else "en",
            task=f"客户要求退款，请把订单 {oid} 的付款退掉。"
            if zh
            else f"The customer wants their money back: refund the payment of order {oid}.",
            gold_actions=p.actions,
            gold_answer=f"订单 {oid} 的付款为 {amount} 元，超过退款上限，"
            "无法直接退款，正在为您转人工客服。"
            if zh
            else f"The payment of order {oid} is {amount} CNY, above the refund limit, so I "
            "cannot refund it myself: I am transferring you to a human agent.",
            required_outputs=[HUMAN_AGENT, NumberOutput(number=amount)],
            forbidden_actions=no_writes(),
            expected_termination="stopped_early",
            max_model_calls=4,
            policy=POLICY,
            tags=["hand-off", "policy", "refusal"],
        )


TEMPLATES = (policy_facts, refund_hand_off)
