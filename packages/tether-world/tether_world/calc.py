"""Calculation tools: discount, shipping, currency conversion and a safe calculator.

Thin schemas over :mod:`tether_world.pricing` and :mod:`tether_world.arith`, so the model
computes with exactly the rules the payment service enforces.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field

from tether_world.arith import evaluate, to_plain
from tether_world.faults import FaultInjector
from tether_world.fields import STRICT
from tether_world.money import Amount, fmt, round_half_up
from tether_world.pricing import (
    CNY_PER_UNIT,
    FREE_SHIPPING_MIN,
    MemberTier,
    convert,
    quote,
    shipping_fee,
    shipping_zone,
)
from tether_world.toolkit import make_tool

_CURRENCIES = ", ".join(CNY_PER_UNIT)


class DiscountArgs(BaseModel):
    model_config = STRICT
    subtotal: Amount = Field(
        description="Order subtotal before discounts, CNY, at most 2 decimals (query_order's "
        "subtotal) / 订单小计（折扣前，人民币，最多两位小数）"
    )
    member_tier: MemberTier = Field(
        "none",
        description="Customer's member tier: none, silver, gold or platinum (query_order's "
        "member_tier) / 会员等级",
    )
    coupon_code: str | None = Field(
        None,
        max_length=32,
        description="At most one coupon code, as query_order gives it (its coupon_code); "
        "omit for none / 优惠券码，最多一张，可不填",
    )
    shipping_fee: Amount = Field(
        Decimal("0.00"),
        description="Shipping fee to add, CNY (query_order's shipping_fee) / 运费（人民币）",
    )


class ShippingArgs(BaseModel):
    model_config = STRICT
    weight_kg: Decimal = Field(
        gt=0,
        le=100,
        decimal_places=3,
        description="Parcel weight in kg, more than 0 and at most 100 "
        "(query_order's total_weight_kg) / 包裹重量（千克，0-100）",
    )
    country: str = Field(
        "CN",
        pattern=r"^[A-Za-z]{2}$",
        description="Destination ISO country code, e.g. CN, US / 目的国家两位代码，默认 CN",
    )
    province: str | None = Field(
        None,
        max_length=64,
        description="Destination province for China, e.g. 上海市 or Xinjiang / 目的省份（国内）",
    )
    subtotal: Amount | None = Field(
        None,
        description=f"Order subtotal in CNY; same-city and domestic orders of "
        f"{FREE_SHIPPING_MIN} or more ship free / 订单小计，满 {FREE_SHIPPING_MIN} 国内包邮",
    )


class ConvertArgs(BaseModel):
    model_config = STRICT
    amount: Amount = Field(description="Amount to convert, at most 2 decimals / 金额")
    from_currency: str = Field(
        pattern=r"^[A-Za-z]{3}$",
        description=f"ISO code of the amount's currency, one of {_CURRENCIES} / 原币种",
    )
    to_currency: str = Field(
        pattern=r"^[A-Za-z]{3}$",
        description=f"ISO code to convert to, one of {_CURRENCIES} / 目标币种",
    )


class CalculateArgs(BaseModel):
    model_config = STRICT
    expression: str = Field(
        min_length=1,
        max_length=300,
        description="Arithmetic with numbers, + - * / // % ** and parentheses only, built from "
        "the numbers of the task or of tool results; no names or functions / "
        "只含数字、运算符和括号的算式",
    )
    round_to: int | None = Field(
        None,
        ge=0,
        le=10,
        description="Round the result half-up to this many decimals (2 for money) / 保留小数位",
    )


def calc_tools(faults: FaultInjector | None = None) -> list[BaseTool]:
    """The four calculation tools."""
    pairs: list[tuple[Callable[..., Any], type[BaseModel]]] = [
        (compute_discount, DiscountArgs),
        (compute_shipping, ShippingArgs),
        (convert_currency, ConvertArgs),
        (calculate, CalculateArgs),
    ]
    return [make_tool(fn, schema, faults=faults) for fn, schema in pairs]


def compute_discount(
    subtotal: Decimal,
    member_tier: str = "none",
    coupon_code: str | None = None,
    shipping_fee: Decimal = Decimal("0.00"),
) -> dict[str, Any]:
    """Price an order: member discount, coupon, stacking and the payable amount. For an order,
    pass query_order's subtotal, member_tier, coupon_code and shipping_fee: the returned
    payable is exactly the amount pay_order must charge. Rules: members get none 0% / silver 3%
    / gold 5% / platinum 8% off; one coupon per order, minimum spend checked on the subtotal; a
    percentage coupon does not stack with the member discount (the larger applies), a fixed
    coupon stacks after it; payable = subtotal - discount + shipping_fee.
    计算折扣与应付金额。"""
    return quote(subtotal, member_tier, coupon_code or None, shipping_fee).as_dict()


def compute_shipping(
    weight_kg: Decimal,
    country: str = "CN",
    province: str | None = None,
    subtotal: Decimal | None = None,
) -> dict[str, Any]:
    """Shipping fee from the Shanghai warehouse by zone: same_city (Shanghai) 8 + 2 per extra
    started kg, domestic 12 + 4, remote (Xinjiang, Tibet, Qinghai) 20 + 8, international
    80 + 30; same-city and domestic orders with a subtotal of 199.00 or more ship free.
    计算运费。"""
    zone = shipping_zone(country, province)
    return shipping_fee(weight_kg, zone, subtotal).as_dict()


def convert_currency(amount: Decimal, from_currency: str, to_currency: str) -> dict[str, Any]:
    """Convert an amount between currencies at the shop's fixed rates (CNY per unit: USD 7.20,
    EUR 7.80, GBP 9.10, HKD 0.92, JPY 0.048, SGD 5.35), rounded half-up to 2 decimals.
    Payments are always made in CNY. 按固定汇率换算货币。"""
    source, target = from_currency.upper(), to_currency.upper()
    converted = convert(amount, source, target)
    return {
        "amount": fmt(amount),
        "from_currency": source,
        "to_currency": target,
        "converted": fmt(converted),
        "rate": to_plain(round_half_up(CNY_PER_UNIT[source] / CNY_PER_UNIT[target], 6)),
    }


def calculate(expression: str, round_to: int | None = None) -> dict[str, Any]:
    """Evaluate an arithmetic expression exactly (decimal, not float): numbers, + - * / //
    % ** and parentheses only. Use it for sums and percentages; use compute_discount for
    order prices. 精确计算算式。"""
    value = evaluate(expression)
    result = to_plain(value) if round_to is None else str(round_half_up(value, round_to))
    return {"expression": expression, "result": result}
