"""Scenarios that need no world data: irrelevant questions and impossible requests."""

from __future__ import annotations

from tether_bench.gen.api import pay_plan
from tether_bench.gen.base import (
    CANNOT,
    ORDER_ID_NEEDED,
    Generator,
    no_writes,
)
from tether_bench.scenarios import ForbiddenAction, InitialState, NumberOutput, TextOutput

IRRELEVANT: list[tuple[str, str, str, list[TextOutput | NumberOutput]]] = [
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
"""(language, question, reference answer, required outputs)."""


def irrelevant(g: Generator) -> None:
    """Questions no tool is needed for."""
    for i, (language, task, answer, required) in enumerate(IRRELEVANT, start=1):
        g.add(
            id=f"irrelevant-{i:02d}",
            category="irrelevant",
            language=language,
            task=task,
            gold_answer=answer,
            required_outputs=required,
            forbidden_actions=no_writes(),
        )


def impossible_missing(g: Generator) -> None:
    """Requests that lack the order id: ask for it."""
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
        g.add(
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


def impossible_no_tool(g: Generator) -> None:
    """Requests no tool can do: say so."""
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
        g.add(
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


def impossible_shipped(g: Generator) -> None:
    """Cancel a shipped order: refuse, it has shipped."""
    for i, order in enumerate(g.pick_orders("shipped", 2), start=1):
        zh, oid = g.zh(i), order["id"]
        with g.plan() as p:
            p.call("query_order", order_id=oid)
        g.add(
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


def impossible_already_paid(g: Generator) -> None:
    """Pay an order that is already paid (set up by an initial state)."""
    order = g.pick_orders("pending", 1)[0]
    oid = order["id"]
    with g.plan() as setup:
        pay_plan(g, setup, oid)
    with g.plan(setup.actions[-1:]) as p:
        p.call("query_order", order_id=oid)
    g.add(
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


TEMPLATES = (
    irrelevant,
    impossible_missing,
    impossible_no_tool,
    impossible_shipped,
    impossible_already_paid,
)
