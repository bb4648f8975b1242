"""The design note's running example, scripted: query ORD-2024-001, compute its discount, pay.

The replies are what a well-behaved model would write, including the Chinese quotes the note
saw Qwen produce in an Action Input (tether repairs them). Used by ``tether demo``, the
quickstart notebook and the tests; nothing here calls a real model.
"""

from __future__ import annotations

SEED_TASK = "查询订单 ORD-2024-001 的状态，计算折扣后调用支付接口付款"

SEED_FLOW_REPLIES: tuple[str, ...] = (
    "Thought: 先查询订单 ORD-2024-001 的状态和金额。\n"
    "Action: query_order\n"
    "Action Input: {“order_id”: “ORD-2024-001”}",
    "Thought: 订单待支付，小计 2471.60，金卡会员，优惠券 SAVE20，运费 0.00。计算折扣。\n"
    "Action: compute_discount\n"
    'Action Input: {"subtotal": "2471.60", "member_tier": "gold", "coupon_code": "SAVE20", '
    '"shipping_fee": "0.00"}',
    "Thought: 应付 2328.02 元，调用支付接口。\n"
    "Action: pay_order\n"
    'Action Input: {"order_id": "ORD-2024-001", "amount": "2328.02"}',
    "Thought: 支付成功，任务完成。\n"
    "Final Answer: 订单 ORD-2024-001 待支付；金卡会员 5% 折扣 123.58 元加优惠券 SAVE20 "
    "减 20.00 元，应付 2328.02 元，已支付成功。",
)
