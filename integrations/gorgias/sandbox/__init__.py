"""A local Gorgias that :class:`~integrations.gorgias.GorgiasClient` cannot tell from the real one.

Caseward reads helpdesk tickets and posts replies and internal notes through Gorgias'
REST API, and hears about new tickets and messages through the account's HTTP
integrations. What it must survive: Gorgias' rate limit (40 requests per 20 s per
account, 429 with ``Retry-after``), a post whose answer is lost after Gorgias stored the
message, credentials that stopped working, and an integration Gorgias turns off after
100 failed calls in a row. The sandbox serves accounts by domain, with Gorgias' ticket
and message shapes, basic auth, the rate limit on its clock, the kit's faults, and
integrations rendered from Gorgias' template variables.

In-process::

    sandbox = GorgiasSandbox(clock=Clock(start=1_700_000_000))
    handle = sandbox.start()                      # handle.url, handle.stop()
    domain = sandbox.create_account("shop", api_users=[ApiUser("me@shop.example", "key")])
    ticket = sandbox.open_ticket(domain, customer_email="maya@example.com",
                                 subject="Torn apron", body_text="...")
    client = GorgiasClient(f"https://{domain}", "me@shop.example", "key",
                           timeout_s=5, api_base=handle.url)
    sandbox.customer_writes(ticket, "Any news?")  # fires ticket-message-created
    sandbox.received_requests(domain)             # what arrived, and how it was answered

As a process: ``python -m integrations.gorgias.sandbox --port 12114 [--no-demo]``.

The clock, HTTP server, faults and holds, request log and delivery queue are the shared
:mod:`integrations.sandbox_kit`; everything Gorgias-shaped is here.
"""

from integrations.sandbox_kit import FAULT_HEADER, Clock, Fault, ReceivedRequest, SandboxHandle

from .demo import DEMO_ACCOUNT, DEMO_API_KEY, DEMO_API_USER, DemoAccount, seed_demo_account
from .http_integrations import FAILURE_LIMIT, TRIGGERS, IntegrationConfig
from .ratelimit import CALL_LIMIT_HEADER, AccountLimits
from .sandbox import GorgiasSandbox, domain_for
from .state import ApiUser
from .templating import render_body, render_url

__all__ = [
    "CALL_LIMIT_HEADER",
    "DEMO_ACCOUNT",
    "DEMO_API_KEY",
    "DEMO_API_USER",
    "FAILURE_LIMIT",
    "FAULT_HEADER",
    "TRIGGERS",
    "AccountLimits",
    "ApiUser",
    "Clock",
    "DemoAccount",
    "Fault",
    "GorgiasSandbox",
    "IntegrationConfig",
    "ReceivedRequest",
    "SandboxHandle",
    "domain_for",
    "render_body",
    "render_url",
    "seed_demo_account",
]
