"""Faults from the shared kit on Admin GraphQL: a mutation that commits and then loses its
connection, a 500 after committing, a hold that makes a race deterministic; and the
received-request log that shows what really arrived."""

from __future__ import annotations

import threading
from typing import Any

import httpx
import pytest
from shopify_sandbox_documents import ORDER, REFUND_CREATE, SHOP
from shopify_sandbox_support import Seeded, graphql, refund_input, wait_until

from integrations.shopify.sandbox import FAULT_HEADER, Fault, SandboxShop, ShopifySandbox


def _refunds(client: httpx.Client, shop: SandboxShop, token: str, seeded: Seeded) -> list[Any]:
    answer = graphql(client, shop.domain, token, ORDER, {"id": seeded.order}).json()
    return list(answer["data"]["order"]["refunds"])


def _refund(
    client: httpx.Client, shop: SandboxShop, token: str, seeded: Seeded, key: str
) -> httpx.Response:
    variables = {"input": refund_input(seeded), "key": key}
    return graphql(client, shop.domain, token, REFUND_CREATE, variables)


def test_a_refund_dropped_after_commit_exists_once_and_the_retry_replays_it(
    client: httpx.Client, sandbox: ShopifySandbox, shop: SandboxShop, token: str, seeded: Seeded
) -> None:
    sandbox.arm_fault(
        Fault(
            kind="drop_after_commit",
            path="/admin/api/*/graphql.json",
            idempotency_key="caseward-action-*",
        )
    )

    with pytest.raises(httpx.RemoteProtocolError):
        _refund(client, shop, token, seeded, "caseward-action-42")
    (committed,) = _refunds(client, shop, token, seeded)  # the query was not faulted

    retry = _refund(client, shop, token, seeded, "caseward-action-42").json()
    assert retry["data"]["refundCreate"]["refund"]["id"] == committed["id"]
    assert len(_refunds(client, shop, token, seeded)) == 1
    keyed = [
        (r.idempotency_key, r.status, r.dropped, r.replayed)
        for r in sandbox.received_requests(shop.domain)
        if r.idempotency_key
    ]
    assert keyed == [
        ("caseward-action-42", None, True, False),
        ("caseward-action-42", 200, False, True),
    ]


def test_a_500_after_commit_is_shopifys_internal_error_and_the_refund_stands(
    client: httpx.Client, sandbox: ShopifySandbox, shop: SandboxShop, token: str, seeded: Seeded
) -> None:
    sandbox.arm_fault(Fault(kind="error_500_after_commit", operation="refundCreate"))
    graphql(client, shop.domain, token, SHOP)  # a query does not match the fault

    failed = _refund(client, shop, token, seeded, "key-500")

    assert failed.status_code == 500
    (error,) = failed.json()["errors"]
    assert error["extensions"]["code"] == "INTERNAL_SERVER_ERROR"
    assert len(_refunds(client, shop, token, seeded)) == 1


def test_a_drop_before_commit_runs_nothing_and_the_key_stays_free(
    client: httpx.Client, sandbox: ShopifySandbox, shop: SandboxShop, token: str, seeded: Seeded
) -> None:
    sandbox.arm_fault(Fault(kind="drop_before_commit", operation="RefundCreate"))
    with pytest.raises(httpx.RemoteProtocolError):
        _refund(client, shop, token, seeded, "key-early")
    assert _refunds(client, shop, token, seeded) == []

    again = _refund(client, shop, token, seeded, "key-early").json()
    assert again["data"]["refundCreate"]["userErrors"] == []
    assert [r.replayed for r in sandbox.received_requests(shop.domain) if r.idempotency_key] == [
        False,
        False,
    ]


def test_a_held_refund_makes_a_second_send_with_its_key_wait_its_turn(
    client: httpx.Client, sandbox: ShopifySandbox, shop: SandboxShop, token: str, seeded: Seeded
) -> None:
    hold = sandbox.arm_fault(Fault(kind="hold", operation="refundCreate"))
    first: dict[str, httpx.Response] = {}
    sender = threading.Thread(
        target=lambda: first.update(answer=_refund(client, shop, token, seeded, "key-race"))
    )
    sender.start()
    assert wait_until(lambda: any(h.waiting for h in sandbox.holds()))

    concurrent = _refund(client, shop, token, seeded, "key-race").json()
    assert concurrent["errors"][0]["extensions"]["code"] == "IDEMPOTENCY_CONCURRENT_REQUEST"
    assert _refunds(client, shop, token, seeded) == []  # held: nothing committed yet

    assert sandbox.release_hold(hold.id) == [hold.id]
    sender.join(timeout=10)
    assert first["answer"].json()["data"]["refundCreate"]["userErrors"] == []
    assert len(_refunds(client, shop, token, seeded)) == 1


def test_a_fault_can_be_asked_for_per_request_with_the_header(
    client: httpx.Client, shop: SandboxShop, token: str
) -> None:
    answer = graphql(
        client, shop.domain, token, SHOP, headers={FAULT_HEADER: "error_500_before_commit"}
    )
    assert answer.status_code == 500
    assert graphql(client, shop.domain, token, SHOP).status_code == 200
