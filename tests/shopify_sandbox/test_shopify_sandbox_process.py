"""``python -m integrations.shopify.sandbox`` serves the demo's linen shop as a process,
steered through its token-guarded ``/_sandbox/`` control endpoints."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from shopify_sandbox_documents import ORDER
from shopify_sandbox_support import graphql, shop_client

from integrations.shopify.sandbox import DEMO_API_KEY, DEMO_API_SECRET

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def process() -> Iterator[dict[str, str]]:
    """The sandbox on a free port; yields the ``KEY=value`` lines it printed."""
    child = subprocess.Popen(
        [sys.executable, "-m", "integrations.shopify.sandbox", "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "SHOPIFY_SANDBOX_CONTROL_TOKEN": "test-token"},
    )
    assert child.stdout is not None
    printed: dict[str, str] = {}
    while "SHOPIFY_SANDBOX_ORDER" not in printed:
        line = child.stdout.readline()
        assert line, child.stderr.read() if child.stderr else "no output"
        key, _, value = line.strip().partition("=")
        printed[key] = value
    try:
        yield printed
    finally:
        child.send_signal(signal.SIGTERM)
        child.wait(timeout=10)


def test_the_process_serves_the_demo_shop_and_its_controls(process: dict[str, str]) -> None:
    url = process["SHOPIFY_SANDBOX_URL"]
    shop = process["SHOPIFY_SANDBOX_SHOP"]
    assert shop == "linen-and-loom.myshopify.com"
    assert (process["SHOPIFY_API_KEY"], process["SHOPIFY_API_SECRET"]) == (
        DEMO_API_KEY,
        DEMO_API_SECRET,
    )
    control = {"Authorization": "Bearer test-token"}
    assert httpx.get(f"{url}/_sandbox/health", timeout=5).status_code == 401
    session = httpx.post(
        f"{url}/_sandbox/shops/{shop}/session_token", json={"user_id": 1001}, headers=control
    ).json()["token"]

    with shop_client(url) as client:
        exchanged = client.post(
            f"https://{shop}/admin/oauth/access_token",
            json={
                "client_id": DEMO_API_KEY,
                "client_secret": DEMO_API_SECRET,
                "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
                "subject_token": session,
                "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
                "requested_token_type": "urn:shopify:params:oauth:token-type:offline-access-token",
                "expiring": 1,
            },
        ).json()
        order_id = process["SHOPIFY_SANDBOX_ORDER"]
        answer = graphql(client, shop, exchanged["access_token"], ORDER, {"id": order_id})

    order = answer.json()["data"]["order"]
    assert order["name"] == "#1001"
    assert order["customer"]["displayName"] == "Maya Lin"
    assert order["totalPriceSet"]["shopMoney"] == {"amount": "96.0", "currencyCode": "USD"}
    assert order["fulfillments"][0]["displayStatus"] == "DELIVERED"
    requests = httpx.get(f"{url}/_sandbox/shops/{shop}/requests", headers=control).json()
    assert [r["path"] for r in requests] == [
        "/admin/oauth/access_token",
        "/admin/api/2026-04/graphql.json",
    ]
