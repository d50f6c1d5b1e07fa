"""Which of the permissions Caseward needs a restricted key holds, asked of Stripe
without changing anything there.

Stripe does not tell a restricted key its own permissions, but it checks a key's
permission before anything else about a request: a key without it gets a 403 naming
the permission (``more_permissions_required``), a key with it gets the request's own
answer. So each permission is probed with a request whose own answer is harmless:
reads list at most one object; writes create or update something for an id that cannot
exist, which Stripe refuses (400 or 404) once the permission check has passed, so
nothing is created either way.

The sequence: build one probe per permission (fresh impossible ids each time), run them
side by side on the adapter's client (a bounded pool, so one slow answer does not make
the merchant wait for every probe in turn), sort each answer into granted, missing or
unknown (a timeout, a dropped connection, a 5xx or a 429 says nothing about the
permission), read the account id if the key may, and refuse the whole key when Stripe
does not know it (401).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from enum import Enum

import stripe

from integrations.provider import CredentialsRefused

_log = logging.getLogger(__name__)

# At most this many probes wait on Stripe at once: the worst case (every probe timing
# out) costs two timeouts, not eleven, and Stripe's test-mode limit (25 a second) is
# far away.
PARALLEL_PROBES = 6


class _Answer(Enum):
    GRANTED = "granted"
    MISSING = "missing"
    UNKNOWN = "unknown"
    KEY_UNKNOWN = "key_unknown"


@dataclass(frozen=True)
class _Permission:
    """One permission as Stripe names it (``rak_refund_write``) and as its dashboard
    shows it (the resource's row and the level to pick there)."""

    name: str
    resource: str
    level: str
    probe: Callable[[stripe.StripeClient, str], object]


def _nowhere(prefix: str, nonce: str) -> str:
    """An id Stripe never mints (its ids hold no further underscore) and nobody made:
    the random part is new for each check."""
    return f"{prefix}caseward_probe_{nonce}"


# Reads list at most one object. Writes name an object that cannot exist (see
# ``_nowhere``); the updates are empty and the balance transaction is for zero, so even
# those would change nothing. None carries an idempotency key of ours (the SDK adds a
# random one per call): a request that cannot create anything leaves nothing for a
# second attempt to duplicate.
PERMISSIONS: tuple[_Permission, ...] = (
    _Permission("rak_charge_read", "Charges", "Read", lambda c, n: c.v1.charges.list({"limit": 1})),
    _Permission(
        "rak_payment_intent_read",
        "PaymentIntents",
        "Read",
        lambda c, n: c.v1.payment_intents.list({"limit": 1}),
    ),
    _Permission(
        "rak_customer_read", "Customers", "Read", lambda c, n: c.v1.customers.list({"limit": 1})
    ),
    _Permission(
        "rak_subscription_read",
        "Subscriptions",
        "Read",
        lambda c, n: c.v1.subscriptions.list({"limit": 1}),
    ),
    _Permission(
        "rak_dispute_read", "Disputes", "Read", lambda c, n: c.v1.disputes.list({"limit": 1})
    ),
    _Permission(
        "rak_refund_write",
        "Refunds",
        "Write",
        lambda c, n: c.v1.refunds.create({"payment_intent": _nowhere("pi_", n)}),
    ),
    _Permission(
        "rak_customer_write",
        "Customers",
        "Write",
        lambda c, n: c.v1.customers.balance_transactions.create(
            _nowhere("cus_", n), {"amount": 0, "currency": "usd"}
        ),
    ),
    _Permission(
        "rak_coupon_write",
        "Coupons",
        "Write",
        lambda c, n: c.v1.coupons.update(_nowhere("", n), {}),
    ),
    _Permission(
        "rak_promotion_code_write",
        "Promotion codes",
        "Write",
        lambda c, n: c.v1.promotion_codes.update(_nowhere("promo_", n), {}),
    ),
    _Permission(
        "rak_subscription_write",
        "Subscriptions",
        "Write",
        lambda c, n: c.v1.subscriptions.update(_nowhere("sub_", n), {}),
    ),
    _Permission(
        "rak_webhook_write",
        "Webhook endpoints",
        "Write",
        lambda c, n: c.v1.webhook_endpoints.update(_nowhere("we_", n), {}),
    ),
)

_BY_NAME = {permission.name: permission for permission in PERMISSIONS}


@dataclass(frozen=True)
class PermissionReport:
    """What Stripe said about each permission Caseward needs, in :data:`PERMISSIONS`
    order: ``granted``, ``missing`` (a 403 naming it) or ``unknown`` (no usable answer;
    try again)."""

    granted: tuple[str, ...]
    missing: tuple[str, ...]
    unknown: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """Every permission is known to be granted."""
        return not self.missing and not self.unknown

    def settings_to_add(self) -> list[str]:
        """The missing permissions as Stripe's dashboard names them (``Refunds: Write``)."""
        return _dashboard_settings(self.missing)

    def settings_unanswered(self) -> list[str]:
        """The permissions Stripe did not answer for, as its dashboard names them."""
        return _dashboard_settings(self.unknown)


def _dashboard_settings(names: tuple[str, ...]) -> list[str]:
    """``Resource: Level`` for each permission, one per resource at its highest level
    (a key lacking both reading and writing subscriptions needs ``Subscriptions: Write``)."""
    levels: dict[str, str] = {}
    for name in names:
        permission = _BY_NAME[name]
        if levels.get(permission.resource) != "Write":
            levels[permission.resource] = permission.level
    return [f"{resource}: {level}" for resource, level in levels.items()]


def check_permissions(client: stripe.StripeClient, masked_key: str) -> PermissionReport:
    """Probe every permission in :data:`PERMISSIONS`.

    Raises :class:`~integrations.provider.CredentialsRefused` when Stripe does not
    know the key at all (401): there is no permission to report then.
    """
    nonce = uuid.uuid4().hex
    with ThreadPoolExecutor(max_workers=PARALLEL_PROBES) as pool:
        answers = list(pool.map(lambda p: _probe(client, p, nonce), PERMISSIONS))
    if _Answer.KEY_UNKNOWN in answers:
        raise CredentialsRefused(
            f"Stripe does not know the key {masked_key}: check that it was copied whole "
            "and has not been rolled or deleted in the Stripe dashboard.",
            reason="unknown_key",
            key=masked_key,
        )
    sorted_names: dict[_Answer, tuple[str, ...]] = {
        answer: tuple(p.name for p, a in zip(PERMISSIONS, answers, strict=True) if a is answer)
        for answer in _Answer
    }
    return PermissionReport(
        granted=sorted_names[_Answer.GRANTED],
        missing=sorted_names[_Answer.MISSING],
        unknown=sorted_names[_Answer.UNKNOWN],
    )


def _probe(client: stripe.StripeClient, permission: _Permission, nonce: str) -> _Answer:
    """What one probe's answer says about its permission. Any answer past Stripe's
    permission check (success, 400, 404) means the key holds it."""
    try:
        permission.probe(client, nonce)
    except stripe.StripeError as error:
        status = error.http_status
        if status == 401:
            return _Answer.KEY_UNKNOWN
        if status == 403:
            return _Answer.MISSING
        if status is None or status in (409, 429) or status >= 500:
            # The error's text is not logged: only the status says what happened here.
            _log.warning(
                "Stripe permission probe %s: no answer (%s, HTTP %s)",
                permission.name,
                type(error).__name__,
                status,
            )
            return _Answer.UNKNOWN
    return _Answer.GRANTED
