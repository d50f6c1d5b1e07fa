"""The Stripe adapter: the only code in Caseward that talks to Stripe about money.

It implements :class:`integrations.provider.ProviderAdapter` on top of the official
``stripe`` SDK, with its own :class:`stripe.StripeClient` built by ``_client`` (never the
SDK's process-wide ``stripe.api_key``) and with the SDK's own retries switched off: a
retry must reuse our idempotency key and must be a decision of the money path, not of a
library.

The work is split by concern: ``_client`` (the SDK client and its HTTP session),
``_errors`` (credentials and error translation), ``_facts`` (reads), ``_writes`` (submit
and find), ``_permissions`` (what a key may do).
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime

import stripe

from integrations.provider import (
    ActionKind,
    ActionRequest,
    ProviderAnswer,
    ProviderCustomer,
    ProviderError,
    TargetFacts,
    Targets,
)

from ._client import path, stripe_client
from ._errors import REQUIRED_PERMISSIONS, Calls, check_key, mask_key
from ._facts import Reader
from ._permissions import PermissionReport, check_permissions
from ._writes import Writer

__all__ = [
    "REQUIRED_PERMISSIONS",
    "TARGETS",
    "WEBHOOK_EVENTS",
    "PermissionReport",
    "StripeAdapter",
]

# The events Caseward's webhook handling reacts to: refunds moving, money coming back,
# disputes, and subscriptions changing or ending outside Caseward.
WEBHOOK_EVENTS = (
    "refund.created",
    "refund.updated",
    "refund.failed",
    "charge.refunded",
    "charge.dispute.created",
    "charge.dispute.closed",
    "customer.subscription.updated",
    "customer.subscription.deleted",
)


# Stripe object ids: a prefix naming the object, then letters and digits.
def _stripe_id(*prefixes: str) -> re.Pattern[str]:
    return re.compile(rf"(?:{'|'.join(prefixes)})[A-Za-z0-9_]{{1,250}}")


TARGETS = Targets(
    ids={
        ActionKind.REFUND: _stripe_id("pi_", "ch_"),
        ActionKind.CUSTOMER_CREDIT: _stripe_id("cus_"),
        ActionKind.DISCOUNT: _stripe_id("cus_"),
        ActionKind.SUBSCRIPTION_CANCEL: _stripe_id("sub_"),
        ActionKind.SUBSCRIPTION_CHANGE: _stripe_id("sub_"),
    },
    examples={
        ActionKind.REFUND: "a Stripe payment 'pi_...' or charge 'ch_...'",
        ActionKind.CUSTOMER_CREDIT: "a Stripe customer 'cus_...'",
        ActionKind.DISCOUNT: "a Stripe customer 'cus_...'",
        ActionKind.SUBSCRIPTION_CANCEL: "a Stripe subscription 'sub_...'",
        ActionKind.SUBSCRIPTION_CHANGE: "a Stripe subscription 'sub_...'",
    },
    # Stripe refunds no lines: the id is the store order line the amount is counted
    # against (the order's own line id), checked by the guard against the order.
    line_item_id=re.compile(r"[A-Za-z0-9_:/.-]{1,255}"),
)


def _utc_now() -> datetime:
    return datetime.now(UTC)


class StripeAdapter:
    """Facts, one write per action, and lookups, against one Stripe account and mode.

    ``sleep`` (pauses between retries of a 409) and ``now`` (the cut-off of the credit
    history in facts) are injectable so tests neither wait nor depend on the wall clock.
    """

    name = "stripe"
    targets = TARGETS

    def __init__(
        self,
        api_key: str,
        *,
        livemode: bool,
        api_base: str | None = None,
        timeout_seconds: float = 20.0,
        sleep: Callable[[float], None] = time.sleep,
        now: Callable[[], datetime] = _utc_now,
    ) -> None:
        check_key(api_key, livemode=livemode)
        self.livemode = livemode
        self._masked_key = mask_key(api_key)
        client = stripe_client(api_key, api_base=api_base, timeout_seconds=timeout_seconds)
        calls = Calls(api_key, sleep)
        self._client = client
        self._reader = Reader(client, calls, now)
        self._writer = Writer(client, calls, self._reader)

    def __repr__(self) -> str:
        mode = "live" if self.livemode else "test"
        return f"StripeAdapter({self._masked_key}, {mode})"

    def facts(self, kind: ActionKind, target: str) -> TargetFacts:
        """Fresh facts about what an action of ``kind`` touches.

        Refunds: a payment intent (``pi_``) or charge (``ch_``) with all its refunds;
        credits and discounts: the customer; subscription actions: the subscription.
        A target Stripe does not know comes back with ``exists=False``.
        """
        kind = ActionKind(kind)  # a plain "refund" string must not fall through to another kind
        if kind is ActionKind.REFUND:
            return self._reader.payment(target)
        if kind in (ActionKind.CUSTOMER_CREDIT, ActionKind.DISCOUNT):
            return self._reader.customer(target)
        return self._reader.subscription(target)

    def submit(self, request: ActionRequest) -> ProviderAnswer:
        """Send the one write under ``request.idempotency_key``.

        Raises :class:`~integrations.provider.OutcomeUnknown` when the write may have
        happened (timeout, connection dropped after sending, 5xx, a 409 that persists);
        :class:`~integrations.provider.Throttled` when Stripe answered 429 (it ran
        nothing; ``retry_after`` carries its ``Retry-After`` in seconds, or ``None``);
        :class:`~integrations.provider.NotSent` when the connection was refused, so no
        byte of the request left; :class:`~integrations.provider.ProviderRejected` (or its
        ``PermissionDenied``) when Stripe refused it; and
        :class:`~integrations.provider.IdempotencyConflict` when Stripe knows the key with
        other parameters; :class:`~integrations.provider.InvalidRequest`, before anything
        is sent, for a request it will not build (no positive amount, no currency, a
        parameter out of range). After ``Throttled`` or ``NotSent`` the same request may be sent
        again with the same key.
        """
        return self._writer.submit(_normalised(request))

    def register_webhook_endpoint(self, url: str, events: Sequence[str]) -> tuple[str, str]:
        """Create a webhook endpoint at Stripe for ``events`` (see :data:`WEBHOOK_EVENTS`)
        and return its id and its signing secret, which Stripe shows only this once.

        Needs the key's Webhook endpoints write permission (``rak_webhook_write``);
        without it, :class:`~integrations.provider.PermissionDenied`. A fresh
        idempotency key per call: a second registration is a second endpoint, so whether
        to try again after :class:`~integrations.provider.OutcomeUnknown` is the caller's
        decision (list the endpoints first).
        """
        if not url.startswith(("https://", "http://")):
            raise ValueError(f"a webhook endpoint needs an http(s) URL, not {url!r}")
        enabled = list(dict.fromkeys(events))
        if not enabled or not all(isinstance(e, str) and e for e in enabled):
            raise ValueError("a webhook endpoint needs at least one event type")
        params: stripe.params.WebhookEndpointCreateParams = {
            "url": url,
            # The SDK types the names it knew when released; Stripe's list keeps growing.
            "enabled_events": enabled,  # type: ignore[typeddict-item]
        }
        endpoint = self._writer.write(
            f"webhook endpoint registration for {url}",
            f"caseward-webhook-endpoint-{uuid.uuid4()}",
            "post",
            path("webhook_endpoints"),
            params,
        ).data
        if not endpoint.get("secret"):
            raise ProviderError(
                f"Stripe created webhook endpoint {endpoint.get('id')} without a secret"
            )
        return str(endpoint["id"]), str(endpoint["secret"])

    def check_permissions(self) -> PermissionReport:
        """Which permissions Caseward needs the key holds, found without changing anything
        at Stripe (see :mod:`integrations.stripe._permissions`).

        A probe Stripe did not answer (timeout, 5xx, 429) is reported ``unknown``, never
        ``missing``. Raises :class:`~integrations.provider.CredentialsRefused` when
        Stripe does not know the key.
        """
        return check_permissions(self._client, self._masked_key)

    def customers_with_email(self, email: str) -> tuple[ProviderCustomer, ...]:
        """Stripe's customers with ``email``, to link a case's verified customer to theirs
        (the caller decides which answers match). Stripe's filter matches the email case
        and all, so it is asked as written and, when that differs, in lower case, as
        checkouts most often keep it. Deleted customers are not listed."""
        found: dict[str, ProviderCustomer] = {}
        for written in dict.fromkeys((email, email.lower())):
            for row in self._reader.customers_with_email(written):
                if isinstance(row.get("id"), str) and isinstance(row.get("email"), str):
                    found[row["id"]] = ProviderCustomer(id=row["id"], email=row["email"])
        return tuple(found.values())

    def find(self, request: ActionRequest) -> ProviderAnswer | None:
        """The write's effect as Stripe reports it now, matched by our action id; ``None``
        when there is none. Never writes, so it also serves to refresh a status."""
        return self._writer.find(_normalised(request))


def _normalised(request: ActionRequest) -> ActionRequest:
    """The request with its kind as an :class:`ActionKind`, so dispatch by identity is exact
    (a stored ``"refund"`` string compares equal but is not the enum member)."""
    return replace(request, kind=ActionKind(request.kind))
