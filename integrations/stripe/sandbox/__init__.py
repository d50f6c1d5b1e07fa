"""A local Stripe that the unmodified ``stripe`` SDK cannot tell from the real one.

Caseward's money path must execute each approved refund exactly once, against a provider
that times out, answers 500 after committing, delivers webhooks twice and out of order,
and fails card refunds days later. This sandbox reproduces those behaviours on Stripe's
wire format (form-encoded requests, Stripe's objects, errors, idempotency, restricted
keys, signed webhooks) and lets tests trigger them on demand.

In-process::

    sandbox = StripeSandbox(clock=Clock(start=1_700_000_000))
    handle = sandbox.start()                      # handle.url, handle.stop()
    keys = sandbox.create_account(restricted_keys=[{"permissions": {"refunds": "write"}}])
    client = stripe.StripeClient(keys.secret_key, base_addresses={"api": handle.url})
    sandbox.received_requests(keys.id)            # what arrived: method, path, key, answer
    sandbox.seed_history(keys.id, records)        # months of past money actions, at once

Stripe's per-account rate limits are off unless asked for:
``StripeSandbox(rate_limits=RateLimits())`` applies Stripe's numbers (25 reads and 25
writes per second in test mode, 100 each in live mode).

As a process: ``python -m integrations.stripe.sandbox --port 12111 [--snapshot FILE]
[--rate-limits stripe]``.

The clock, HTTP server, faults and holds, received-request log, due work and webhook
queue are the shared :mod:`integrations.sandbox_kit`; everything Stripe-shaped (objects,
errors, form encoding, idempotency, keys, signatures) is here.
"""

from integrations.sandbox_kit import FAULT_HEADER, Clock, Fault, ReceivedRequest, SandboxHandle
from integrations.sandbox_kit import KINDS as FAULT_KINDS

from .ratelimit import RateLimits
from .sandbox import (
    DEMO_ACCOUNT_ID,
    DEMO_PERMISSIONS,
    DEMO_RESTRICTED_KEY,
    DEMO_SECRET_KEY,
    AccountKeys,
    RestrictedKey,
    StripeSandbox,
)
from .webhooks import signature_header

__all__ = [
    "DEMO_ACCOUNT_ID",
    "DEMO_PERMISSIONS",
    "DEMO_RESTRICTED_KEY",
    "DEMO_SECRET_KEY",
    "FAULT_HEADER",
    "FAULT_KINDS",
    "AccountKeys",
    "Clock",
    "Fault",
    "RateLimits",
    "ReceivedRequest",
    "RestrictedKey",
    "SandboxHandle",
    "StripeSandbox",
    "signature_header",
]
