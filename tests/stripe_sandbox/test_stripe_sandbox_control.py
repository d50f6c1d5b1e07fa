"""The ``/_sandbox/`` control API a separate process (the demo, e2e tests) steers with."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import requests
import stripe
from stripe_sandbox_support import START, client_for, pay, raw

from integrations.stripe.sandbox import FAULT_HEADER, AccountKeys, SandboxHandle


def _control(
    server: SandboxHandle, method: str, path: str, body: dict[str, Any] | None = None
) -> requests.Response:
    return requests.request(
        method,
        server.url + "/_sandbox" + path,
        json=body,
        headers={"Authorization": f"Bearer {server.control_token}"},
        timeout=5,
    )


def test_balance_refund_mode_clock_and_due_work(
    server: SandboxHandle, client: stripe.StripeClient, account: AccountKeys
) -> None:
    pi = pay(client, 1000)
    assert (
        _control(
            server, "POST", f"/accounts/{account.id}/balance", {"sufficient": False}
        ).status_code
        == 200
    )
    pending = client.v1.refunds.create(params={"payment_intent": pi.id, "amount": 100})
    assert pending.pending_reason == "insufficient_funds"
    _control(server, "POST", f"/accounts/{account.id}/balance", {"sufficient": True})
    assert client.v1.refunds.retrieve(pending.id).status == "succeeded"

    mode = {"mode": "pending_processing", "settle_after": 60}
    assert _control(server, "POST", f"/accounts/{account.id}/refund_mode", mode).status_code == 200
    processing = client.v1.refunds.create(params={"payment_intent": pi.id, "amount": 100})
    assert processing.pending_reason == "processing"
    assert _control(server, "GET", "/clock").json()["now"] == START
    _control(server, "POST", "/clock/advance", {"seconds": 60})
    assert _control(server, "POST", "/process_due").json() == {"ran": 0}  # already done on advance
    assert client.v1.refunds.retrieve(processing.id).status == "succeeded"
    bad_mode = _control(
        server, "POST", f"/accounts/{account.id}/refund_mode", {"mode": "sometimes"}
    )
    assert bad_mode.status_code == 400
    assert (
        _control(server, "POST", "/accounts/acct_nobody/balance", {"sufficient": True}).status_code
        == 404
    )


def _refunds_reader(server: SandboxHandle, account: AccountKeys) -> str:
    """A restricted key of ``account`` that may read refunds, minted through the control."""
    minted = _control(
        server,
        "POST",
        f"/accounts/{account.id}/restricted_keys",
        {"permissions": {"refunds": "read"}},
    )
    return str(minted.json()["key"])


def test_restricted_keys_latency_snapshot_and_reset(
    server: SandboxHandle, account: AccountKeys, tmp_path: Path
) -> None:
    key = _refunds_reader(server, account)
    assert raw(server.url, "GET", "/v1/refunds", key).status_code == 200
    assert raw(server.url, "POST", "/v1/customers", key).status_code == 403
    assert _control(server, "POST", "/latency", {"ms": 0}).status_code == 200
    saved = _control(server, "POST", "/snapshot", {"path": str(tmp_path / "snap.json")})
    assert Path(saved.json()["path"]).exists()
    assert _control(server, "POST", "/reset").json() == {"ok": True}
    assert raw(server.url, "GET", "/v1/refunds", key).status_code == 401
    assert _control(server, "GET", "/nowhere").status_code == 404


def test_a_revoked_key_is_refused_from_its_next_request_on(
    server: SandboxHandle, account: AccountKeys
) -> None:
    key = _refunds_reader(server, account)
    assert raw(server.url, "GET", "/v1/refunds", key).status_code == 200

    assert _control(server, "POST", "/keys/revoke", {"key": key}).status_code == 200

    refused = raw(server.url, "GET", "/v1/refunds", key)
    assert refused.status_code == 401
    assert refused.json()["error"]["message"].startswith("Invalid API Key provided: rk_test_")
    assert raw(server.url, "GET", "/v1/refunds", account.secret_key).status_code == 200
    assert _control(server, "POST", "/keys/revoke", {"key": key}).status_code == 404


def test_invalid_fault_header_is_a_400(url: str, account: AccountKeys) -> None:
    response = raw(
        url, "GET", "/v1/customers", account.secret_key, headers={FAULT_HEADER: "explode"}
    )
    assert response.status_code == 400
    assert FAULT_HEADER in response.json()["error"]["message"]
    assert client_for(url, account.secret_key).v1.customers.list().data == []
