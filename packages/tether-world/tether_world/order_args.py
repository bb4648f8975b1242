"""The orders tools' argument schemas: what a model may pass, described in both languages.

Each field's description is what the model reads in the tool listing, so it says the format
and where to get the value; unknown fields are refused before a tool runs.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from tether_world.fields import STRICT, OrderId, ProductRef, Reason, UserId

OrderStatus = Literal["pending", "paid", "shipped", "delivered", "cancelled"]


class OrderArgs(BaseModel):
    model_config = STRICT
    order_id: OrderId


class FindUserArgs(BaseModel):
    model_config = STRICT
    email: str | None = Field(
        None,
        max_length=200,
        description="The customer's email address, exact (case ignored) / 客户邮箱（完全匹配，"
        "不区分大小写）. Give this, or name and postcode.",
    )
    name: str | None = Field(
        None,
        max_length=100,
        description="Full name as registered, as the task gives it / 注册姓名（全名）. "
        "Use together with postcode.",
    )
    postcode: str | None = Field(
        None,
        max_length=16,
        description="Postcode of the customer's address / 收货地址邮编. Use together with name.",
    )


class ListUserOrdersArgs(BaseModel):
    model_config = STRICT
    user_id: UserId
    status: OrderStatus | None = Field(
        None,
        description="Only orders with this status: pending, paid, shipped, delivered or "
        "cancelled; omit for all / 按订单状态筛选，不填则返回全部",
    )
    limit: int = Field(
        20, ge=1, le=100, description="Most orders to return, 1-100, newest first / 最多返回条数"
    )


class ProductArgs(BaseModel):
    model_config = STRICT
    product_id: ProductRef


class CancelOrderArgs(BaseModel):
    model_config = STRICT
    order_id: OrderId
    reason: Reason = "customer request"


class UpdateAddressArgs(BaseModel):
    model_config = STRICT
    order_id: OrderId
    address_line: str = Field(
        min_length=1,
        max_length=200,
        description="Street, number, building and room, as the customer gives them / "
        "街道门牌及楼栋房间号",
    )
    city: str = Field(min_length=1, max_length=64, description="City / 城市")
    province: str = Field(
        min_length=1,
        max_length=64,
        description="Province or state / 省份或州",
    )
    postcode: str = Field(
        min_length=3,
        max_length=16,
        description="Postcode; 6 digits for China / 邮编，中国为6位数字",
    )
    country: str = Field(
        "CN",
        pattern=r"^[A-Za-z]{2}$",
        description="ISO 3166 two-letter country code, e.g. CN, US, GB / 两位国家代码，默认 CN",
    )
    recipient_name: str | None = Field(
        None, min_length=1, max_length=100, description="New recipient; omit to keep / 收件人"
    )
    phone: str | None = Field(
        None,
        pattern=r"^\+?[0-9][0-9 -]{5,30}$",
        description="New contact phone, digits, spaces, dashes, optional leading + ; omit to "
        "keep / 联系电话",
    )
