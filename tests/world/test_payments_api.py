"""The payment API over HTTP (in-process): create, replay, get, refund and every refusal."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from decimal import Decimal

import httpx
import pytest
from tether_world import World
from tether_world import db as world_db
from tether_world.payments_body import MAX_BODY_BYTES
from tether_world.transport import InProcessTransport

from tests.world.helpers import order_with

PAYABLE_001 = "2328.02"
KEY = "test-key-0001"


@pytest.fixture
def http(world: World) -> Iterator[httpx.Client]:
    transport = InProcessTransport(world.payments_app())
    with httpx.Client(base_url="http://payments.test", transport=transport, timeout=2) as client:
        yield client
    transport.close()


def pay(http: httpx.Client, amount: object = PAYABLE_001, key: str | None = KEY, **body: object):
    headers = {"Idempotency-Key": key} if key is not None else {}
    payload = {"order_id": "ORD-2024-001", "amount": amount, **body}
    return http.post("/payments", json=payload, headers=headers)


def test_create_then_replay_then_get(world: World, http: httpx.Client) -> None:
    first = pay(http)
    assert first.status_code == 201
    payment = first.json()
    assert payment["amount"] == PAYABLE_001 and payment["status"] == "succeeded"
    again = pay(http)
    assert again.status_code == 200 and again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == payment
    assert http.get(f"/payments/{payment['id']}").json() == payment
    mine = [p for p in world.payments() if p["order_id"] == "ORD-2024-001"]
    assert len(mine) == 1
    assert http.get("/health").json() == {"status": "ok"}


def test_amount_may_be_a_json_number(http: httpx.Client) -> None:
    response = http.post(
        "/payments",
        content=b'{"order_id": "ORD-2024-001", "amount": 2328.02}',
        headers={"Idempotency-Key": KEY, "Content-Type": "application/json"},
    )
    assert response.status_code == 201 and response.json()["amount"] == PAYABLE_001


@pytest.mark.parametrize(
    ("amount", "key", "extra", "status", "code"),
    [
        (PAYABLE_001, None, {}, 400, "idempotency_key_missing"),
        (PAYABLE_001, "short", {}, 400, "idempotency_key_invalid"),
        (PAYABLE_001, "bad key with spaces", {}, 400, "idempotency_key_invalid"),
        (PAYABLE_001, "x' OR '1'='1' --", {}, 400, "idempotency_key_invalid"),
        ("-5.00", KEY, {}, 422, "amount_invalid"),
        ("0", KEY, {}, 422, "amount_invalid"),
        ("2328.021", KEY, {}, 422, "amount_invalid"),
        ("NaN", KEY, {}, 422, "amount_invalid"),
        (True, KEY, {}, 422, "amount_invalid"),
        ("2471.60", KEY, {}, 422, "amount_mismatch"),
        (PAYABLE_001, KEY, {"currency": "USD"}, 422, "currency_unsupported"),
        (PAYABLE_001, KEY, {"order_id": "ORD-2024-5000"}, 404, "order_not_found"),
        (PAYABLE_001, KEY, {"order_id": "1 OR 1=1"}, 422, "order_id_invalid"),
    ],
)
def test_bad_requests_are_refused_and_change_nothing(
    world: World,
    http: httpx.Client,
    amount: object,
    key: str | None,
    extra: dict,
    status: int,
    code: str,
) -> None:
    before = world.snapshot_hash()
    response = pay(http, amount, key, **extra)
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code
    assert response.json()["error"]["message"]
    assert world.snapshot_hash() == before


def test_amount_mismatch_names_the_payable_amount(http: httpx.Client) -> None:
    message = pay(http, "2000.00").json()["error"]["message"]
    assert PAYABLE_001 in message and "compute_discount" in message


def test_a_failed_request_does_not_burn_the_key(http: httpx.Client) -> None:
    assert pay(http, "1.00").status_code == 422
    assert pay(http).status_code == 201


def test_reusing_a_key_for_another_request_is_refused(world: World, http: httpx.Client) -> None:
    assert pay(http).status_code == 201
    other = order_with(world, "pending", world_db.orders.c.id != "ORD-2024-001")
    response = pay(http, "1.00", order_id=other)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "idempotency_key_reused"


def test_a_second_key_cannot_pay_a_paid_order(world: World, http: httpx.Client) -> None:
    first = pay(http).json()
    response = pay(http, key="another-key-0002")
    assert response.status_code == 409
    assert first["id"] in response.json()["error"]["message"]
    assert len([p for p in world.payments() if p["order_id"] == "ORD-2024-001"]) == 1


@pytest.mark.parametrize("status", ["cancelled", "shipped"])
def test_only_pending_orders_can_be_paid(world: World, http: httpx.Client, status: str) -> None:
    response = pay(http, "1.00", order_id=order_with(world, status))
    assert response.status_code == 409 and response.json()["error"]["code"] == "order_not_payable"


def test_malformed_bodies(http: httpx.Client) -> None:
    headers = {"Idempotency-Key": KEY}
    assert http.post("/payments", content=b"{not json", headers=headers).status_code == 400
    assert http.post("/payments", json=[1, 2], headers=headers).status_code == 400


def test_refund_cancels_the_order_and_is_idempotent(world: World, http: httpx.Client) -> None:
    payment = pay(http).json()
    refunded = http.post(f"/payments/{payment['id']}/refund", json={"reason": "不要了"})
    assert refunded.status_code == 200 and refunded.json()["status"] == "refunded"
    after_first = world.snapshot_hash()
    again = http.post(f"/payments/{payment['id']}/refund")
    assert (
        again.status_code == 200 and again.json()["refunded_at"] == refunded.json()["refunded_at"]
    )
    assert world.snapshot_hash() == after_first
    order = world.snapshot()["orders"]
    assert next(o for o in order if o["id"] == "ORD-2024-001")["status"] == "cancelled"


def test_refund_refused_once_shipped_and_for_unknown_payments(
    world: World, http: httpx.Client
) -> None:
    shipped = order_with(world, "shipped")
    payment = next(p for p in world.payments() if p["order_id"] == shipped)
    before = world.snapshot_hash()
    response = http.post(f"/payments/{payment['id']}/refund", json={})
    assert response.status_code == 409 and response.json()["error"]["code"] == "order_shipped"
    assert http.get("/payments/PAY-0000000000000000").status_code == 404
    assert http.post("/payments/PAY-0000000000000000/refund").status_code == 404
    assert world.snapshot_hash() == before


def test_ledger_amounts_are_decimal_strings(world: World, http: httpx.Client) -> None:
    pay(http)
    for payment in world.payments():
        assert Decimal(payment["amount"]).as_tuple().exponent == -2


# --- untrusted bodies: bounded size, depth and fields, always a 4xx JSON error ---------------


def assert_refused(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code
    assert response.json()["error"]["message"]


@pytest.mark.parametrize(
    "nested", ["[" * 5_000, '{"a":' * 3_000, '{"order_id": [[[[[[[[[1]]]]]]]]]}']
)
def test_deep_bodies_are_refused_before_decoding(
    world: World, http: httpx.Client, nested: str
) -> None:
    before = world.snapshot_hash()
    response = http.post("/payments", content=nested.encode(), headers={"Idempotency-Key": KEY})
    assert_refused(response, 400, "body_too_deep")
    assert world.snapshot_hash() == before


def test_brackets_inside_strings_do_not_count_as_nesting(http: httpx.Client) -> None:
    response = pay(http, reason_typo="[[[[[[[[[[[[")
    assert_refused(response, 422, "field_unknown")  # read fine, refused for the field


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/payments", {"order_id": "ORD-2024-001", "amount": PAYABLE_001, "coupon": "VIP"}),
        ("/payments/PAY-0000000000000000/refund", {"reason": "x", "amount": "1.00"}),
    ],
)
def test_unknown_fields_are_refused(
    world: World, http: httpx.Client, path: str, body: dict
) -> None:
    before = world.snapshot_hash()
    response = http.post(path, json=body, headers={"Idempotency-Key": KEY})
    assert_refused(response, 422, "field_unknown")
    assert world.snapshot_hash() == before


def test_a_large_declared_body_is_refused_unread(http: httpx.Client) -> None:
    response = http.post(
        "/payments",
        content=b"{}",
        headers={"Idempotency-Key": KEY, "Content-Length": str(100 * 1024 * 1024)},
    )
    assert_refused(response, 413, "body_too_large")


def test_a_large_streamed_body_is_not_read_whole(world: World) -> None:
    sent = 0
    chunk = b" " * (1024 * 1024)

    async def body() -> AsyncIterator[bytes]:
        nonlocal sent
        for _ in range(100):  # 100 MiB if it were all read
            sent += 1
            yield chunk

    async def post() -> httpx.Response:
        transport = httpx.ASGITransport(app=world.payments_app())
        async with httpx.AsyncClient(transport=transport, base_url="http://payments.test") as c:
            return await c.post("/payments", content=body(), headers={"Idempotency-Key": KEY})

    response = asyncio.run(post())
    assert_refused(response, 413, "body_too_large")
    assert sent < 100


@pytest.mark.parametrize(
    "body",
    [
        {"order_id": {"$ne": None}, "amount": PAYABLE_001},
        {"order_id": "ORD-2024-001", "amount": {"value": 1}},
        {"order_id": "ORD-2024-001", "amount": [1]},
        {"order_id": "ORD-2024-001", "amount": PAYABLE_001, "currency": 156},
        {"order_id": "ORD-2024-001", "amount": 10**400},
    ],
)
def test_wrong_types_are_4xx_json(http: httpx.Client, body: dict) -> None:
    response = http.post("/payments", json=body, headers={"Idempotency-Key": KEY})
    assert 400 <= response.status_code < 500, response.text
    assert response.json()["error"]["code"]


def test_malformed_encodings_are_400(http: httpx.Client) -> None:
    headers = {"Idempotency-Key": KEY}
    assert_refused(
        http.post("/payments", content=b"\xff\xfe{", headers=headers), 400, "body_invalid"
    )
    refund = http.post("/payments/PAY-0000000000000000/refund", content=b"[1]")
    assert_refused(refund, 400, "body_invalid")


@pytest.mark.parametrize(
    ("encoding", "width"), [("utf-16-le", 2), ("utf-16", 2), ("utf-16-be", 2), ("utf-32", 4)]
)
def test_a_body_not_in_utf8_is_refused_before_decoding(
    world: World, http: httpx.Client, encoding: str, width: int
) -> None:
    """JSON over HTTP is UTF-8, and the depth scan reads UTF-8 bytes. In UTF-16, "∀" (bytes
    00 22) fooled the scan into a string that hid thousands of levels of nesting from it; the
    decoder then overflowed the stack: HTTP 500 with a traceback."""
    depth = (MAX_BODY_BYTES // width - 16) // 2
    body = ('["\u2200", ' + "[" * depth + "]" * depth + "]").encode(encoding)
    assert len(body) <= MAX_BODY_BYTES
    before = world.snapshot_hash()
    response = http.post("/payments", content=body, headers={"Idempotency-Key": KEY})
    assert_refused(response, 400, "body_invalid")
    assert "UTF-8" in response.json()["error"]["message"]
    assert world.snapshot_hash() == before


def test_a_hundred_thousand_deep_body_is_a_4xx(http: httpx.Client) -> None:
    response = http.post("/payments", content=b"[" * 100_000, headers={"Idempotency-Key": KEY})
    assert_refused(response, 413, "body_too_large")
