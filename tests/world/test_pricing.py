"""The pricing rules: tiers, coupons, stacking, minimum spend, shipping and currencies."""

from __future__ import annotations

from decimal import Decimal

import pytest
from tether_world.pricing import PricingError, convert, quote, shipping_fee, shipping_zone

D = Decimal


def test_member_tier_alone() -> None:
    q = quote(D("1000.00"), "platinum")
    assert (q.member_discount, q.coupon_discount, q.payable) == (D("80.00"), 0, D("920.00"))


def test_percentage_coupon_replaces_a_smaller_member_discount() -> None:
    q = quote(D("100.00"), "silver", "WELCOME10")  # 10 % coupon beats 3 % tier
    assert (q.member_discount, q.coupon_discount, q.payable) == (0, D("10.00"), D("90.00"))


def test_percentage_coupon_is_capped() -> None:
    q = quote(D("1000.00"), "none", "SPRING15")  # 15 % = 150, capped at 100
    assert q.coupon_discount == D("100.00") and q.payable == D("900.00")
    q = quote(D("400.00"), "platinum", "SPRING15")  # 15 % = 60 beats 8 % = 32
    assert (q.member_discount, q.coupon_discount) == (0, D("60.00"))


def test_member_discount_applies_when_larger_than_the_percentage_coupon() -> None:
    q = quote(D("2000.00"), "platinum", "SPRING15")  # 8 % = 160 beats the capped 100
    assert (q.member_discount, q.coupon_discount) == (D("160.00"), 0)
    assert q.payable == D("1840.00")
    assert "member discount is larger" in " ".join(q.notes)


def test_fixed_coupon_stacks_after_member_discount() -> None:
    q = quote(D("2471.60"), "gold", "SAVE20", D("0.00"))
    assert q.member_discount == D("123.58")
    assert q.coupon_discount == D("20.00")
    assert q.payable == D("2328.02")


def test_shipping_is_added_to_payable() -> None:
    assert quote(D("50.00"), "none", None, D("12.00")).payable == D("62.00")


def test_minimum_spend_is_checked_on_the_subtotal() -> None:
    with pytest.raises(PricingError, match=r"minimum spend of 200\.00.*subtotal is 199\.99"):
        quote(D("199.99"), "none", "SAVE20")
    assert quote(D("200.00"), "none", "SAVE20").payable == D("180.00")


def test_tier_restricted_coupon() -> None:
    with pytest.raises(PricingError, match="only for gold and platinum"):
        quote(D("500.00"), "silver", "GOLD30")
    assert quote(D("500.00"), "gold", "GOLD30").discount == D("55.00")


def test_unknown_coupon_says_how_to_fix() -> None:
    with pytest.raises(PricingError, match=r"Unknown coupon code 'FREE99'.*without coupon_code"):
        quote(D("100.00"), "none", "FREE99")


def test_coupon_codes_are_case_insensitive() -> None:
    assert quote(D("100.00"), "none", " welcome10 ").coupon_code == "WELCOME10"


def test_unknown_tier_and_negative_amounts() -> None:
    with pytest.raises(PricingError, match="member tier"):
        quote(D("1.00"), "diamond")
    with pytest.raises(PricingError, match="negative"):
        quote(D("-1.00"))


def test_discount_rounds_half_up_per_component() -> None:
    q = quote(D("0.10"), "gold")  # 5 % of 0.10 = 0.005 -> 0.01
    assert q.member_discount == D("0.01") and q.payable == D("0.09")


@pytest.mark.parametrize(
    ("country", "province", "zone"),
    [
        ("CN", "上海市", "same_city"),
        ("cn", "Shanghai", "same_city"),
        ("CN", "广东省", "domestic"),
        ("CN", "新疆维吾尔自治区", "remote"),
        ("CN", "Tibet", "remote"),
        ("US", "CA", "international"),
        ("CN", None, "domestic"),
    ],
)
def test_shipping_zones(country: str, province: str | None, zone: str) -> None:
    assert shipping_zone(country, province) == zone


def test_shipping_fee_counts_started_kilograms() -> None:
    assert shipping_fee(D("0.2"), "domestic").fee == D("12.00")
    assert shipping_fee(D("1.0"), "domestic").fee == D("12.00")
    assert shipping_fee(D("1.01"), "domestic").fee == D("16.00")
    assert shipping_fee(D("2.35"), "remote").fee == D("36.00")
    assert shipping_fee(D("2.35"), "international", D("5000")).fee == D("140.00")


def test_free_shipping_threshold_only_for_near_zones() -> None:
    assert shipping_fee(D("3"), "domestic", D("199.00")).free
    assert not shipping_fee(D("3"), "domestic", D("198.99")).free
    assert not shipping_fee(D("3"), "remote", D("999.00")).free


def test_shipping_weight_limits() -> None:
    for weight in (D(0), D("100.01")):
        with pytest.raises(PricingError, match=r"freight|more than 0"):
            shipping_fee(weight, "domestic")


def test_currency_conversion_uses_fixed_rates_and_rounds() -> None:
    assert convert(D("100.00"), "USD", "CNY") == D("720.00")
    assert convert(D("100.00"), "CNY", "USD") == D("13.89")  # 13.888... rounds up
    assert convert(D("1000"), "JPY", "CNY") == D("48.00")
    with pytest.raises(PricingError, match="Unsupported currency 'XYZ'"):
        convert(D("1"), "XYZ", "CNY")
