"""The sandbox routing: shop URLs reach the configured base with path, query, body and
the shop's Host header intact; nothing else leaves."""

from __future__ import annotations

import httpx
import pytest
from shopify_client_support import SHOP, Answer, ScriptedServer

from integrations.shopify.transport import shopify_http_client


def test_a_shop_request_reaches_the_base_with_its_host_path_and_body(
    server: ScriptedServer,
) -> None:
    with shopify_http_client(server.url, timeout=5.0) as client:
        response = client.post(
            f"https://{SHOP}/admin/api/2026-04/graphql.json?trace=1&a=%2F",
            content=b'{"query":"{ shop { id } }"}',
            headers={"X-Shopify-Access-Token": "shpat_x"},
        )

    assert response.json() == {
        "host": SHOP,
        "path": "/admin/api/2026-04/graphql.json?trace=1&a=%2F",
    }
    (received,) = server.received
    assert received.body == b'{"query":"{ shop { id } }"}'
    assert received.headers["X-Shopify-Access-Token"] == "shpat_x"


def test_a_base_with_a_path_prefixes_it(server: ScriptedServer) -> None:
    with shopify_http_client(server.url + "/shopify/", timeout=5.0) as client:
        response = client.get(f"https://{SHOP}/admin/oauth/access_token")

    assert response.json() == {"host": SHOP, "path": "/shopify/admin/oauth/access_token"}


@pytest.mark.parametrize("url", ["https://example.com/x", "https://demo.myshopify.com.evil.io/x"])
def test_other_hosts_are_refused_before_sending(server: ScriptedServer, url: str) -> None:
    server.queue(Answer(body={}))
    with shopify_http_client(server.url, timeout=5.0) as client, pytest.raises(httpx.ConnectError):
        client.get(url)

    assert server.received == []
