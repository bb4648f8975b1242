"""Argument types shared by the world's tool schemas, described in English and Chinese.

Ids are normalised (surrounding spaces dropped, upper-cased, order numbers zero-padded to the
canonical 3+ digits) before they are checked, so a model that writes ``ord-2024-1`` is
understood rather than refused.

Each pattern sits in the ``Field`` that comes first in the ``Annotated`` metadata, so pydantic
puts it in the JSON schema the model is constrained by (a ``Field`` after a validator is not
merged into the schema). Patterns use ``[0-9]``, not ``\\d``: llama.cpp's schema-to-grammar
converter does not support ``\\d`` and silently accepts any string instead. Descriptions give
an id's shape, never an example value: a small model copies examples into real calls.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BeforeValidator, ConfigDict, Field

STRICT = ConfigDict(extra="forbid", str_strip_whitespace=True)
"""Schema config: unknown fields are an error the model can fix, not silently ignored."""

ORDER_ID_PATTERN = r"^ORD-[0-9]{4}-[0-9]{3,}$"
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
    Field(
        pattern=ORDER_ID_PATTERN,
        description="Order id exactly as the task or a tool result gives it: 'ORD-', a 4-digit "
        "year, '-', then 3 or more digits / "
        "订单号：ORD-、4位年份、-、至少3位序号，照抄任务或工具结果中的编号",
    ),
    BeforeValidator(_order_id),
]
UserId = Annotated[
    str,
    Field(
        pattern=r"^U[0-9]{4,}$",
        description="User id: 'U' and 4 or more digits, as the task or find_user gives it / "
        "用户编号：U 加至少4位数字，来自任务或 find_user 的结果",
    ),
    BeforeValidator(_upper),
]
ProductRef = Annotated[
    str,
    Field(
        pattern=r"^P[0-9]{3,}(-[0-9]{2,})?$",
        description="Product id ('P' and 3 or more digits) or a variant SKU (a product id, "
        "'-', 2 or more digits) / 商品编号（P 加至少3位数字）或规格 SKU（商品编号-至少2位数字）",
    ),
    BeforeValidator(_upper),
]
PaymentId = Annotated[
    str,
    Field(
        pattern=r"^PAY-[0-9A-F]{16}$",
        description="Payment id as returned by pay_order or query_order: 'PAY-' and 16 "
        "hexadecimal digits / 支付单号，来自 pay_order 或 query_order 的结果",
    ),
    BeforeValidator(_upper),
]
Reason = Annotated[
    str,
    Field(
        min_length=1,
        max_length=200,
        description="Short reason in the customer's words, 1-200 characters / 原因，1-200 个字符",
    ),
]
