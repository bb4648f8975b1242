"""Argument types shared by the world's tool schemas, described in English and Chinese.

Ids are normalised (surrounding spaces dropped, upper-cased, order numbers zero-padded to the
canonical 3+ digits) before they are checked, so a model that writes ``ord-2024-1`` is
understood rather than refused.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BeforeValidator, ConfigDict, Field

STRICT = ConfigDict(extra="forbid", str_strip_whitespace=True)
"""Schema config: unknown fields are an error the model can fix, not silently ignored."""

ORDER_ID_PATTERN = r"^ORD-\d{4}-\d{3,}$"
ORDER_ID_RE = re.compile(ORDER_ID_PATTERN)


def _upper(value: Any) -> Any:
    return value.strip().upper() if isinstance(value, str) else value


def _order_id(value: Any) -> Any:
    """Upper-case, and pad or trim the sequence to the canonical 3+ digits (ORD-2024-0001)."""
    value = _upper(value)
    match = re.fullmatch(r"ORD-(\d{4})-(\d{1,12})", value) if isinstance(value, str) else None
    return f"ORD-{match[1]}-{int(match[2]):03d}" if match else value


OrderId = Annotated[
    str,
    BeforeValidator(_order_id),
    Field(
        pattern=ORDER_ID_PATTERN,
        description="Order id: 'ORD-', the year, '-', a sequence of 3+ digits, e.g. "
        "ORD-2024-001 / 订单号，格式为 ORD-年份-至少3位序号，例如 ORD-2024-001",
    ),
]
UserId = Annotated[
    str,
    BeforeValidator(_upper),
    Field(
        pattern=r"^U\d{4,}$",
        description="User id: 'U' and 4+ digits, e.g. U0001 (find it with find_user) / "
        "用户编号：U 加至少4位数字，例如 U0001（可用 find_user 查询）",
    ),
]
ProductRef = Annotated[
    str,
    BeforeValidator(_upper),
    Field(
        pattern=r"^P\d{3,}(-\d{2,})?$",
        description="Product id like P001, or a variant SKU like P001-02 / "
        "商品编号（如 P001）或规格 SKU（如 P001-02）",
    ),
]
PaymentId = Annotated[
    str,
    BeforeValidator(_upper),
    Field(
        pattern=r"^PAY-[0-9A-F]{16}$",
        description="Payment id as returned by pay_order or query_order, e.g. "
        "PAY-0123456789ABCDEF / 支付单号，来自 pay_order 或 query_order 的结果",
    ),
]
Reason = Annotated[
    str,
    Field(
        min_length=1,
        max_length=200,
        description="Short reason in the customer's words, 1-200 characters / 原因，1-200 个字符",
    ),
]
