"""The one way Caseward builds a :class:`stripe.StripeClient`: its own key (never the SDK's
process-wide ``stripe.api_key``), the SDK's retries off (a retry must reuse our
idempotency key and is the caller's decision, not a library's), and one HTTP session.

The session reads the environment's proxy settings once, here, instead of on every
request: ``requests`` would otherwise scan the environment (``get_environ_proxies``)
before each call, a measurable part of a refund's own time. Certificates are the SDK's
bundle either way, so nothing else the environment says applied to these calls.
"""

from __future__ import annotations

import requests
import stripe

DEFAULT_API_BASE = "https://api.stripe.com"


def stripe_client(
    api_key: str, *, api_base: str | None, timeout_seconds: float
) -> stripe.StripeClient:
    session = requests.Session()
    session.trust_env = False
    found = requests.utils.get_environ_proxies(api_base or DEFAULT_API_BASE)
    proxies = {scheme: found[scheme] for scheme in ("http", "https") if scheme in found}
    return stripe.StripeClient(
        api_key,
        base_addresses={"api": api_base} if api_base else None,
        max_network_retries=0,
        http_client=stripe.RequestsClient(
            timeout=timeout_seconds,
            session=session,
            proxy=proxies or None,  # type: ignore[arg-type]
        ),
    )
