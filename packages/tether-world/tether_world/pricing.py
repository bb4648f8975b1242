"""The shop's pricing rules: member tiers, coupons and their stacking, shipping, currency.

These pure functions are the single definition of what an order costs. The calculation tools
expose them to the model, the seed uses them to build orders, and the payment service uses
:func:`quote` to decide the amount an order must be paid with, so all three always agree.

Discount rules (applied by :func:`quote`):

1. Member tiers take a percentage off the subtotal: none 0 %, silver 3 %, gold 5 %,
   platinum 8 %.
2. At most one coupon per order. Its minimum spend is checked against the subtotal before any
   discount; some coupons are limited to certain tiers.
3. Stacking: a *percentage* coupon does not stack with the member discount, the larger of the
   two applies; a *fixed-amount* coupon stacks and is taken off after the member discount.
4. Every component is rounded half-up to cents; the discount never exceeds the subtotal.

``payable = subtotal - discount + shipping_fee``.

Shipping (from the Shanghai warehouse): a first-kilogram price plus a price per further
started kilogram, by zone; same-city and domestic orders with a subtotal of 199.00 or more ship
free. Currency rates are fixed demo rates (CNY per unit), not market data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

from tether_world.money import CURRENCY, fmt, percent_of, round_money

MemberTier = Literal["none", "silver", "gold", "platinum"]
TIER_PERCENT: dict[str, int] = {"none": 0, "silver": 3, "gold": 5, "platinum": 8}


class PricingError(ValueError):
    """Inputs that break a pricing rule; the message says how to fix the call."""


@dataclass(frozen=True)
class Coupon:
    code: str
    kind: Literal["percent", "fixed"]
    value: Decimal
    """Percent off for ``percent`` coupons, CNY off for ``fixed`` ones."""
    min_spend: Decimal = Decimal("0.00")
    cap: Decimal | None = None
    """Largest discount a percentage coupon gives."""
    tiers: frozenset[str] | None = None
    """Member tiers allowed to use the coupon; None means everyone."""

    def describe(self) -> str:
        amount = f"{self.value}% off" if self.kind == "percent" else f"{fmt(self.value)} CNY off"
        parts = [amount]
        if self.min_spend:
            parts.append(f"minimum spend {fmt(self.min_spend)}")
        if self.cap is not None:
            parts.append(f"at most {fmt(self.cap)}")
        if self.tiers:
            parts.append(f"{'/'.join(sorted(self.tiers))} members only")
        return f"{self.code}: " + ", ".join(parts)


COUPONS: dict[str, Coupon] = {
    c.code: c
    for c in (
        Coupon("WELCOME10", "percent", Decimal(10)),
        Coupon("SPRING15", "percent", Decimal(15), Decimal("300.00"), cap=Decimal("100.00")),
        Coupon("SAVE20", "fixed", Decimal("20.00"), Decimal("200.00")),
        Coupon("BIG100", "fixed", Decimal("100.00"), Decimal("1000.00")),
        Coupon(
            "GOLD30",
            "fixed",
            Decimal("30.00"),
            Decimal("150.00"),
            tiers=frozenset({"gold", "platinum"}),
        ),
    )
}


def find_coupon(code: str) -> Coupon:
    """The coupon for ``code`` (case and surrounding spaces ignored) or a PricingError."""
    coupon = COUPONS.get(code.strip().upper())
    if coupon is None:
        raise PricingError(
            f"Unknown coupon code {code!r}. Coupon codes are upper-case letters and digits "
            "such as SAVE20; check the code the customer gave, or call again without "
            "coupon_code to price the order without a coupon."
        )
    return coupon


def check_coupon(coupon: Coupon, subtotal: Decimal, tier: str) -> None:
    """Raise PricingError when ``coupon`` cannot be used on this subtotal by this tier."""
    if subtotal < coupon.min_spend:
        raise PricingError(
            f"Coupon {coupon.code} needs a minimum spend of {fmt(coupon.min_spend)} CNY "
            f"(before discounts); the subtotal is {fmt(subtotal)}. Call again without "
            "coupon_code."
        )
    if coupon.tiers is not None and tier not in coupon.tiers:
        raise PricingError(
            f"Coupon {coupon.code} is only for {' and '.join(sorted(coupon.tiers))} members; "
            f"the member tier is {tier!r}. Call again without coupon_code."
        )


@dataclass(frozen=True)
class Quote:
    """What an order costs, component by component."""

    subtotal: Decimal
    member_tier: str
    coupon_code: str | None
    member_discount: Decimal
    coupon_discount: Decimal
    shipping_fee: Decimal
    notes: tuple[str, ...]

    @property
    def discount(self) -> Decimal:
        return self.member_discount + self.coupon_discount

    @property
    def payable(self) -> Decimal:
        return self.subtotal - self.discount + self.shipping_fee

    def as_dict(self) -> dict[str, Any]:
        """JSON-safe form: amounts as 2-place strings."""
        return {
            "currency": CURRENCY,
            "subtotal": fmt(self.subtotal),
            "member_tier": self.member_tier,
            "coupon_code": self.coupon_code,
            "member_discount": fmt(self.member_discount),
            "coupon_discount": fmt(self.coupon_discount),
            "discount": fmt(self.discount),
            "shipping_fee": fmt(self.shipping_fee),
            "payable": fmt(self.payable),
            "notes": list(self.notes),
        }


def quote(
    subtotal: Decimal,
    member_tier: str = "none",
    coupon_code: str | None = None,
    shipping_fee: Decimal = Decimal("0.00"),
) -> Quote:
    """Price an order by the rules in this module's docstring."""
    if member_tier not in TIER_PERCENT:
        raise PricingError(
            f"Unknown member tier {member_tier!r}; use one of {', '.join(TIER_PERCENT)}."
        )
    if subtotal < 0 or shipping_fee < 0:
        raise PricingError("Subtotal and shipping fee must not be negative.")
    subtotal, shipping_fee = round_money(subtotal), round_money(shipping_fee)
    tier_discount = percent_of(subtotal, TIER_PERCENT[member_tier])
    notes: list[str] = []
    if tier_discount:
        notes.append(f"{member_tier} member: {TIER_PERCENT[member_tier]}% off the subtotal")
    member, by_coupon, code = tier_discount, Decimal("0.00"), None
    if coupon_code:
        coupon = find_coupon(coupon_code)
        check_coupon(coupon, subtotal, member_tier)
        code = coupon.code
        if coupon.kind == "percent":
            offered = percent_of(subtotal, coupon.value)
            if coupon.cap is not None:
                offered = min(offered, coupon.cap)
            if offered > tier_discount:
                member, by_coupon = Decimal("0.00"), offered
                notes.append(f"{coupon.describe()}; replaces the member discount (no stacking)")
            else:
                notes.append(
                    f"{coupon.describe()}; the member discount is larger and applies instead"
                )
        else:
            by_coupon = min(coupon.value, subtotal - member)
            notes.append(f"{coupon.describe()}; stacks after the member discount")
    return Quote(subtotal, member_tier, code, member, by_coupon, shipping_fee, tuple(notes))


# --- shipping ---------------------------------------------------------------------------------
Zone = Literal["same_city", "domestic", "remote", "international"]

ZONE_RATES: dict[str, tuple[Decimal, Decimal]] = {
    "same_city": (Decimal("8.00"), Decimal("2.00")),
    "domestic": (Decimal("12.00"), Decimal("4.00")),
    "remote": (Decimal("20.00"), Decimal("8.00")),
    "international": (Decimal("80.00"), Decimal("30.00")),
}
"""Zone -> (price of the first kilogram, price of each further started kilogram)."""

FREE_SHIPPING_MIN = Decimal("199.00")
FREE_SHIPPING_ZONES = frozenset({"same_city", "domestic"})
MAX_WEIGHT_KG = Decimal(100)
_REMOTE = ("新疆", "西藏", "青海", "xinjiang", "tibet", "xizang", "qinghai")
_WAREHOUSE = ("上海", "shanghai")


def shipping_zone(country: str, province: str | None) -> Zone:
    """The zone of a destination: by ISO country code, then by province (Chinese or English)."""
    if country.strip().upper() != "CN":
        return "international"
    where = (province or "").strip().lower()
    if any(word in where for word in _REMOTE):
        return "remote"
    if any(word in where for word in _WAREHOUSE):
        return "same_city"
    return "domestic"


@dataclass(frozen=True)
class ShippingQuote:
    zone: Zone
    billable_kg: int
    fee: Decimal
    free: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "zone": self.zone,
            "billable_kg": self.billable_kg,
            "shipping_fee": fmt(self.fee),
            "free_shipping": self.free,
            "currency": CURRENCY,
        }


def shipping_fee(weight_kg: Decimal, zone: Zone, subtotal: Decimal | None = None) -> ShippingQuote:
    """Fee for a parcel: first kilogram plus each further started kilogram, free over 199."""
    if weight_kg <= 0 or weight_kg > MAX_WEIGHT_KG:
        raise PricingError(
            f"Weight must be more than 0 and at most {MAX_WEIGHT_KG} kg; got {weight_kg}. "
            "Heavier goods ship as freight and cannot be priced here."
        )
    billable = max(1, math.ceil(weight_kg))
    first, extra = ZONE_RATES[zone]
    free = zone in FREE_SHIPPING_ZONES and subtotal is not None and subtotal >= FREE_SHIPPING_MIN
    fee = Decimal("0.00") if free else round_money(first + extra * (billable - 1))
    return ShippingQuote(zone, billable, fee, free)


# --- currency ---------------------------------------------------------------------------------
CNY_PER_UNIT: dict[str, Decimal] = {
    "CNY": Decimal("1"),
    "USD": Decimal("7.20"),
    "EUR": Decimal("7.80"),
    "GBP": Decimal("9.10"),
    "HKD": Decimal("0.92"),
    "JPY": Decimal("0.048"),
    "SGD": Decimal("5.35"),
}
"""Fixed demo rates: how many CNY one unit of each currency is worth."""


def convert(amount: Decimal, source: str, target: str) -> Decimal:
    """``amount`` of ``source`` in ``target`` at the fixed rates, rounded half-up to 2 places."""
    for code in (source, target):
        if code not in CNY_PER_UNIT:
            raise PricingError(
                f"Unsupported currency {code!r}; use one of {', '.join(CNY_PER_UNIT)} "
                "(ISO 4217 codes, upper case)."
            )
    return round_money(amount * CNY_PER_UNIT[source] / CNY_PER_UNIT[target])
