"""The Stripe adapter: the only code in Caseward that talks to Stripe about money.

It implements :class:`integrations.provider.ProviderAdapter` on top of the official
``stripe`` SDK, with its own :class:`stripe.StripeClient` (never the SDK's process-wide
``stripe.api_key``) and with the SDK's own retries switched off: a retry must reuse our
idempotency key and must be a decision of the money path, not of a library.

The work is split by concern: ``_errors`` (credentials and error translation),
``_facts`` (reads), ``_writes`` (submit and find).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime

import stripe

from integrations.provider import (
    ActionKind,
    ActionRequest,
    ProviderAnswer,
    TargetFacts,
)

from ._errors import Calls, check_key, mask_key
from ._facts import Reader
from ._writes import Writer


def _utc_now() -> datetime:
    return datetime.now(UTC)


class StripeAdapter:
    """Facts, one write per action, and lookups, against one Stripe account and mode.

    ``sleep`` (pauses between retries of a 409) and ``now`` (the cut-off of the credit
    history in facts) are injectable so tests neither wait nor depend on the wall clock.
    """

    name = "stripe"

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
        client = stripe.StripeClient(
            api_key,
            base_addresses={"api": api_base} if api_base else None,
            max_network_retries=0,
            http_client=stripe.RequestsClient(timeout=timeout_seconds),
        )
        calls = Calls(api_key, sleep)
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
        happened, :class:`~integrations.provider.ProviderRejected` (or its
        ``PermissionDenied``) when Stripe refused it, and
        :class:`~integrations.provider.IdempotencyConflict` when Stripe knows the key with
        other parameters.
        """
        return self._writer.submit(_normalised(request))

    def find(self, request: ActionRequest) -> ProviderAnswer | None:
        """The write's effect as Stripe reports it now, matched by our action id; ``None``
        when there is none. Never writes, so it also serves to refresh a status."""
        return self._writer.find(_normalised(request))


def _normalised(request: ActionRequest) -> ActionRequest:
    """The request with its kind as an :class:`ActionKind`, so dispatch by identity is exact
    (a stored ``"refund"`` string compares equal but is not the enum member)."""
    return replace(request, kind=ActionKind(request.kind))
