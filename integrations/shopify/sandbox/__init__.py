"""A local Shopify Admin API (2026-04) that ``shopifyapp`` and Caseward's GraphQL client
cannot tell from the real one.

Caseward's money path must refund a Shopify order exactly once, against a provider that
expires tokens after an hour, throttles by query cost, answers errors inside HTTP 200,
requires ``@idempotent`` keys on ``refundCreate``, and delivers webhooks at least once.
This sandbox reproduces those behaviours on Shopify's wire format and lets tests
trigger the failures on demand:

- token exchange and refresh at ``POST /admin/oauth/access_token`` (session tokens
  minted as the admin mints them; ``invalid_subject_token``, ``invalid_grant``;
  expiring offline tokens; uninstall revokes);
- Admin GraphQL at ``POST /admin/api/2026-04/graphql.json`` (``X-Shopify-Access-Token``,
  401 as Shopify answers): ``shop``, ``customer``, ``order`` (lines, transactions with
  ``paymentId``, refunds, fulfillments, ``suggestedRefund``),
  ``codeDiscountNodeByCode``; the lists ``orders``, ``customers``, ``discountNodes`` and
  an account's store credit transactions, with Shopify's cursors and ``query:`` filters
  (:mod:`.search`), and ``storeCreditAccount``; ``refundCreate``,
  ``storeCreditAccountCredit``, ``discountCodeBasicCreate`` with ``userErrors``; the
  schema is a hand-written subset of Shopify's with Shopify's exact names (:mod:`.schema`);
- ``extensions.cost`` and a per-shop leaky bucket (``THROTTLED``), :mod:`.cost`;
- signed webhooks (``refunds/create``, ``orders/updated``, ``app/uninstalled``,
  ``app/scopes_update`` and the compliance topics), retried, pausable, redeliverable.

Requests find their shop by the ``Host: {name}.myshopify.com`` header, as at Shopify:
clients send ``https://{shop}.myshopify.com/...`` to the sandbox's URL keeping that header.
Amounts given to the seeding methods are integer minor units.

In-process::

    sandbox = ShopifySandbox(api_key="caseward-demo-client-id", api_secret="...",
                             clock=Clock(start=1_700_000_000))
    handle = sandbox.start()                      # handle.url, handle.stop()
    shop = sandbox.create_shop("linen-and-loom", currency="USD", owner_user_id=1001)
    token = sandbox.session_token(shop.domain, user_id=1001, exp_in=60)
    customer = sandbox.seed_customer(shop.domain, email="maya@example.com", first_name="Maya")
    order = sandbox.seed_order(shop.domain, customer_id=customer, currency="USD",
                               lines=[{"title": "Apron", "quantity": 2, "price": 4800}])
    sandbox.arm_fault(Fault(kind="drop_after_commit", operation="refundCreate"))
    sandbox.received_requests(shop.domain)        # method, path, key, operation, status
    sandbox.received_operations(shop.domain)      # each GraphQL request: query or mutation
    sandbox.seed_history(shop.domain, {...})      # a past of refunds, credits, codes (.history)

As a process: ``python -m integrations.shopify.sandbox --port 12112`` (the demo's linen
shop seeded; ``/_sandbox/`` control endpoints behind the printed token).

The clock, HTTP server, faults and holds, received-request log, due work and webhook
queue are the shared :mod:`integrations.sandbox_kit`.
"""

from integrations.sandbox_kit import (
    FAULT_HEADER,
    Clock,
    Fault,
    HoldState,
    ReceivedRequest,
    SandboxHandle,
)

from .demo import DemoShop, seed_demo_shop
from .sandbox import (
    DEFAULT_SCOPES,
    DEMO_API_KEY,
    DEMO_API_SECRET,
    SandboxShop,
    ShopifySandbox,
)
from .schema import API_VERSION
from .webhooks import TOPICS, Event, Subscription, hmac_header

__all__ = [
    "API_VERSION",
    "DEFAULT_SCOPES",
    "DEMO_API_KEY",
    "DEMO_API_SECRET",
    "FAULT_HEADER",
    "TOPICS",
    "Clock",
    "DemoShop",
    "Event",
    "Fault",
    "HoldState",
    "ReceivedRequest",
    "SandboxHandle",
    "SandboxShop",
    "ShopifySandbox",
    "Subscription",
    "hmac_header",
    "seed_demo_shop",
]
