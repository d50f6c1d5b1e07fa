"""Persistence across restarts, reset, and the ``python -m`` entry point."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import requests
import stripe
from stripe_sandbox_support import START, client_for, pay, raw, wait_until

from integrations.stripe.sandbox import (
    DEMO_ACCOUNT_ID,
    DEMO_RESTRICTED_KEY,
    DEMO_SECRET_KEY,
    Clock,
    StripeSandbox,
)

ROOT = Path(__file__).resolve().parents[2]


def test_snapshot_restores_objects_keys_and_idempotency(tmp_path: Path) -> None:
    path = tmp_path / "stripe.json"
    first = StripeSandbox(clock=Clock(start=START), snapshot_path=path)
    handle = first.start()
    keys = first.create_account(restricted_keys=[{"permissions": {"refunds": "write"}}])
    client = client_for(handle.url, keys.secret_key)
    pi = pay(client, 1000, payment_method="pm_card_refundFail")
    refund = client.v1.refunds.create(
        params={"payment_intent": pi.id, "amount": 300}, options={"idempotency_key": "k"}
    )
    handle.stop()  # saves on shutdown
    saved = json.loads(path.read_text())
    assert saved["version"] == 1

    second = StripeSandbox(clock=Clock(start=START), snapshot_path=path)
    handle = second.start()
    try:
        client = client_for(handle.url, keys.secret_key)
        assert client.v1.refunds.retrieve(refund.id).amount == 300
        replay = client.v1.refunds.create(
            params={"payment_intent": pi.id, "amount": 300}, options={"idempotency_key": "k"}
        )
        assert replay.id == refund.id
        assert replay.last_response is not None
        assert replay.last_response.headers["Idempotent-Replayed"] == "true"
        restricted = client_for(handle.url, keys.restricted_keys[0].key)
        assert restricted.v1.refunds.list().data[0].id == refund.id
        # Scheduled work survives too: the refundFail refund still fails on time.
        second.advance_clock(120)
        assert client.v1.refunds.retrieve(refund.id).status == "failed"
    finally:
        handle.stop()


def test_snapshot_is_saved_on_change_and_on_request(tmp_path: Path) -> None:
    path = tmp_path / "live.json"
    box = StripeSandbox(clock=Clock(start=START), snapshot_path=path, background_interval=0.02)
    handle = box.start()
    try:
        keys = box.create_account()
        client_for(handle.url, keys.secret_key).v1.customers.create(
            params={"email": "kept@example.com"}
        )
        wait_until(lambda: path.exists() and "kept@example.com" in path.read_text())
        other = box.save_snapshot(tmp_path / "copy.json")
        assert "kept@example.com" in other.read_text()
    finally:
        handle.stop()


def test_reset_forgets_everything(sandbox: StripeSandbox, url: str) -> None:
    keys = sandbox.create_account()
    client_for(url, keys.secret_key).v1.customers.create()
    sandbox.reset()
    assert raw(url, "GET", "/v1/customers", keys.secret_key).status_code == 401


def test_demo_account_has_fixed_keys() -> None:
    box = StripeSandbox(clock=Clock(start=START), demo_account=True)
    handle = box.start()
    try:
        assert raw(handle.url, "GET", "/v1/refunds", DEMO_RESTRICTED_KEY).status_code == 200
        denied = raw(
            handle.url, "POST", "/v1/payment_intents", DEMO_RESTRICTED_KEY, {"amount": 100}
        )
        assert denied.status_code == 403
        client = client_for(handle.url, DEMO_SECRET_KEY)
        assert pay(client).status == "succeeded"
        box.reset()
        assert raw(handle.url, "GET", "/v1/payment_intents", DEMO_SECRET_KEY).json()["data"] == []
        assert DEMO_ACCOUNT_ID in list(box.iter_accounts())
    finally:
        handle.stop()


def test_process_entry_point_serves_and_stops(tmp_path: Path) -> None:
    snapshot = tmp_path / "process.json"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "integrations.stripe.sandbox",
            "--port",
            "0",
            "--snapshot",
            str(snapshot),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "STRIPE_SANDBOX_CONTROL_TOKEN": "test-token"},
    )
    try:
        assert process.stdout is not None
        printed: dict[str, str] = {}
        while "STRIPE_SANDBOX_RESTRICTED_KEY" not in printed:
            line = process.stdout.readline()
            assert line, "the sandbox exited before printing its keys"
            name, _, value = line.strip().partition("=")
            printed[name] = value
        url = printed["STRIPE_SANDBOX_URL"]
        assert printed["STRIPE_SANDBOX_CONTROL_TOKEN"] == "test-token"
        assert printed["STRIPE_SANDBOX_SECRET_KEY"] == DEMO_SECRET_KEY
        client = stripe.StripeClient(
            printed["STRIPE_SANDBOX_SECRET_KEY"], base_addresses={"api": url}, max_network_retries=0
        )
        pi = pay(client)
        assert client.v1.charges.retrieve(pi.latest_charge).paid is True
        health = requests.get(
            url + "/_sandbox/health", headers={"Authorization": "Bearer test-token"}, timeout=5
        )
        assert health.json()["ok"] is True
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)
    assert process.returncode == 0
    assert pi.id in snapshot.read_text()
