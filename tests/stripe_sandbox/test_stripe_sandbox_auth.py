"""Keys: unknown keys, restricted keys, account isolation, live versus test, control token."""

from __future__ import annotations

import base64
from collections.abc import Callable

import pytest
import requests
import stripe
from stripe_sandbox_support import pay, raw

from integrations.stripe.sandbox import AccountKeys, SandboxHandle, StripeSandbox


def test_unknown_key_is_401_with_the_key_masked(
    make_client: Callable[[str], stripe.StripeClient],
) -> None:
    bogus = "sk_test_51NotARealKeyAtAllButLongEnoughToMaskWXYZ"
    with pytest.raises(stripe.AuthenticationError) as denied:
        make_client(bogus).v1.customers.list()
    assert denied.value.http_status == 401
    message = str(denied.value.user_message)
    assert message.startswith("Invalid API Key provided: sk_test_")
    assert message.endswith("WXYZ")
    assert "NotARealKey" not in message


def test_missing_key_and_basic_auth(url: str, account: AccountKeys) -> None:
    missing = raw(url, "GET", "/v1/customers", None)
    assert missing.status_code == 401
    assert "You did not provide an API key" in missing.json()["error"]["message"]
    token = base64.b64encode(f"{account.secret_key}:".encode()).decode()
    basic = raw(url, "GET", "/v1/customers", None, headers={"Authorization": f"Basic {token}"})
    assert basic.status_code == 200
    assert basic.json()["object"] == "list"


def test_restricted_key_reads_but_cannot_write_without_permission(
    sandbox: StripeSandbox,
    account: AccountKeys,
    client: stripe.StripeClient,
    make_client: Callable[[str], stripe.StripeClient],
) -> None:
    pi = pay(client)
    rk = sandbox.add_restricted_key(account.id, {"charges": "read", "refunds": "read"})
    assert rk.key.startswith("rk_test_")
    restricted = make_client(rk.key)
    assert restricted.v1.charges.retrieve(pi.latest_charge).id == pi.latest_charge
    assert restricted.v1.refunds.list().data == []
    with pytest.raises(stripe.PermissionError) as denied:
        restricted.v1.refunds.create(params={"payment_intent": pi.id})
    err = denied.value
    assert err.http_status == 403
    assert err.error is not None
    assert err.error.type == "invalid_request_error"
    message = str(err.user_message)
    assert f"on account '{account.id}'" in message
    assert (
        "Having the 'rak_refund_write' permission would allow this request to continue." in message
    )
    assert rk.key not in message
    with pytest.raises(stripe.PermissionError) as no_customers:
        restricted.v1.customers.list()
    assert "'rak_customer_read'" in str(no_customers.value.user_message)
    assert client.v1.refunds.list().data == []  # the refused write changed nothing


def test_restricted_key_write_implies_read_and_expand_needs_read(
    sandbox: StripeSandbox,
    account: AccountKeys,
    client: stripe.StripeClient,
    make_client: Callable[[str], stripe.StripeClient],
) -> None:
    pi = pay(client)
    writer = make_client(sandbox.add_restricted_key(account.id, {"refunds": "write"}).key)
    refund = writer.v1.refunds.create(params={"payment_intent": pi.id, "amount": 100})
    assert writer.v1.refunds.retrieve(refund.id).amount == 100
    with pytest.raises(stripe.PermissionError) as denied:
        writer.v1.refunds.retrieve(refund.id, params={"expand": ["charge"]})
    assert "'rak_charge_read'" in str(denied.value.user_message)


def test_accounts_are_isolated(
    sandbox: StripeSandbox,
    client: stripe.StripeClient,
    make_client: Callable[[str], stripe.StripeClient],
) -> None:
    pi = pay(client)
    other = make_client(sandbox.create_account().secret_key)
    assert other.v1.payment_intents.list().data == []
    with pytest.raises(stripe.InvalidRequestError) as missing:
        other.v1.payment_intents.retrieve(pi.id)
    assert missing.value.code == "resource_missing"
    with pytest.raises(stripe.InvalidRequestError):
        other.v1.refunds.create(params={"payment_intent": pi.id})
    assert client.v1.charges.retrieve(pi.latest_charge).amount_refunded == 0


def test_stripe_account_header_cannot_reach_another_account(
    sandbox: StripeSandbox, url: str, account: AccountKeys
) -> None:
    other = sandbox.create_account()
    response = raw(
        url, "GET", "/v1/customers", account.secret_key, headers={"Stripe-Account": other.id}
    )
    assert response.status_code == 403
    assert other.id in response.json()["error"]["message"]


def test_live_and_test_keys_see_separate_data(
    sandbox: StripeSandbox, make_client: Callable[[str], stripe.StripeClient]
) -> None:
    keys = sandbox.create_account(
        live=True, restricted_keys=[{"permissions": {"refunds": "write"}, "livemode": True}]
    )
    assert keys.live_secret_key is not None and keys.live_secret_key.startswith("sk_live_")
    assert keys.restricted_keys[0].key.startswith("rk_live_")
    live, test = make_client(keys.live_secret_key), make_client(keys.secret_key)
    live_pi = pay(live)
    assert live_pi.livemode is True
    assert live.v1.charges.retrieve(live_pi.latest_charge).livemode is True
    test_pi = pay(test)
    assert test_pi.livemode is False
    assert [p.id for p in test.v1.payment_intents.list().data] == [test_pi.id]
    with pytest.raises(stripe.InvalidRequestError):
        test.v1.payment_intents.retrieve(live_pi.id)
    live_refunder = make_client(keys.restricted_keys[0].key)
    assert (
        live_refunder.v1.refunds.create(params={"payment_intent": live_pi.id}).charge
        == live_pi.latest_charge
    )
    test_only = sandbox.create_account()
    with pytest.raises(ValueError, match="no live mode"):
        sandbox.add_restricted_key(test_only.id, {"refunds": "read"}, livemode=True)


def test_control_endpoints_need_the_control_token(
    server: SandboxHandle, account: AccountKeys
) -> None:
    anonymous = requests.post(server.url + "/_sandbox/reset", timeout=5)
    assert anonymous.status_code == 401
    with_stripe_key = requests.post(
        server.url + "/_sandbox/reset",
        headers={"Authorization": f"Bearer {account.secret_key}"},
        timeout=5,
    )
    assert with_stripe_key.status_code == 401
    created = requests.post(
        server.url + "/_sandbox/accounts",
        json={"restricted_keys": [{"permissions": {"refunds": "write", "charges": "read"}}]},
        headers={"X-Sandbox-Control-Token": server.control_token},
        timeout=5,
    )
    assert created.status_code == 200
    body = created.json()
    assert body["id"].startswith("acct_")
    assert body["secret_key"].startswith("sk_test_")
    assert body["restricted_keys"][0]["permissions"] == {"refunds": "write", "charges": "read"}
    assert (
        raw(server.url, "GET", "/v1/refunds", body["restricted_keys"][0]["key"]).status_code == 200
    )
    bad = requests.post(
        server.url + "/_sandbox/accounts",
        json={"restricted_keys": [{"permissions": {"refunds": "admin"}}]},
        headers={"X-Sandbox-Control-Token": server.control_token},
        timeout=5,
    )
    assert bad.status_code == 400
