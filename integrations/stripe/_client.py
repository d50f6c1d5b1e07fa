"""The one way Caseward builds a :class:`stripe.StripeClient`: its own key (never the SDK's
process-wide ``stripe.api_key``), the SDK's retries off (a retry must reuse our
idempotency key and is the caller's decision, not a library's), and one HTTP session.

The session reads the environment's proxy settings once, here, instead of on every
request: ``requests`` would otherwise scan the environment (``get_environ_proxies``)
before each call, a measurable part of a refund's own time. Certificates are the SDK's
bundle either way, so nothing else the environment says applied to these calls.

Answers are read as JSON (:func:`json_request`), not as the SDK's resource objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote

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


@dataclass(frozen=True)
class Answer:
    """What Stripe answered a request: the JSON object and the response's headers."""

    data: dict[str, Any]
    headers: Mapping[str, str]

    @property
    def replayed(self) -> bool:
        """Whether Stripe answered from its idempotency store (``Idempotent-Replayed: true``)."""
        return any(
            name.lower() == "idempotent-replayed" and value.strip().lower() == "true"
            for name, value in self.headers.items()
        )


def json_request(
    client: stripe.StripeClient,
    method: Literal["get", "post", "delete"],
    url: str,
    params: Mapping[str, Any] | None = None,
    options: stripe.RequestOptions | None = None,
) -> Answer:
    """One request through the SDK (its encoding, headers, client settings and typed
    errors), answered as the JSON object Stripe sent.

    Why not the resource methods: they build an SDK object for every nested field of the
    answer, which Caseward would turn straight back into a dict to read with checked
    accessors; for a payment with its charge and refunds that round trip took more of
    the worker's CPU than the HTTP call (1.2 ms of 3.1 ms, measured against the sandbox).
    ``raw_request`` takes the request options among the parameters, as here."""
    response: stripe.StripeResponse = client.raw_request(
        method, url, **{**(params or {}), **(options or {})}
    )
    if not isinstance(response.data, dict):
        raise TypeError(f"Stripe answered {method.upper()} {url} with {type(response.data)}")
    return Answer(response.data, response.headers)


def path(*parts: str) -> str:
    """An API path from its parts, each id quoted as the SDK's own methods quote it."""
    return "/v1/" + "/".join(quote(part, safe="") for part in parts)
