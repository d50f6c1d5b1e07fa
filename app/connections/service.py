"""Connecting a shop to a provider. Keys are checked, encrypted, and never shown again.

Connecting Stripe is one call: the key is checked, then, when the connection has no
signing secret yet and the merchant brings none, the webhook endpoint is registered at
Stripe and its signing secret stored encrypted. A refused registration stores nothing.
Re-saving a key without a signing secret keeps the one already stored (and registers
no second endpoint, which would deliver every event twice).

Before saving, a merchant may test a key: the same checks of its kind and mode, then
Stripe is asked which of the permissions Caseward needs the key holds. Nothing is
stored and nothing changes at Stripe.

A key refused by the adapter (its kind or mode) or by Stripe is refused in the
adapter's words, passed on as they are; Caseward's own refusals are catalogue sentences.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app import audit
from app.actors import Actor
from app.connections.models import Connection
from app.crypto import SecretBox, mask_secret
from app.errors import InvalidInput, ProviderUnavailable
from app.shops.models import Shop, StaffRole
from app.shops.service import require_role
from app.validation import text
from app.words import Sentence, said
from integrations.provider import (
    CredentialsRefused,
    PermissionDenied,
    ProviderError,
    ProviderRejected,
)
from integrations.stripe.adapter import (
    REQUIRED_PERMISSIONS,
    WEBHOOK_EVENTS,
    PermissionReport,
    StripeAdapter,
)

MAX_KEY_LENGTH = 255


def record_saved(
    session: Session, connection: Connection, *, actor: Actor, now: datetime, **data: object
) -> None:
    """Stamp who saved ``connection`` and when, flush it (a new one gets its id, which the
    caller answers with, and a second one of the provider fails here, on the shop's unique
    pair), and audit ``connection.saved`` with its provider, its key's hint and ``data``
    (never a secret)."""
    connection.created_by = actor.ref
    connection.created_at = now
    session.flush()
    audit.record(
        session,
        shop_id=connection.shop_id,
        kind="connection.saved",
        actor=actor,
        data={"provider": connection.provider, "key": connection.key_hint, **data},
        now=now,
    )


def stripe_webhook_url(base_url: str, connection_id: uuid.UUID) -> str:
    """Where Stripe delivers a connection's events (``base_url`` is this app's address)."""
    return f"{base_url.rstrip('/')}/webhooks/stripe/{connection_id}"


@dataclass(frozen=True)
class StripeConnected:
    connection: Connection
    # This call registered the webhook endpoint at Stripe.
    webhook_registered: bool


def save_stripe_connection(
    session: Session,
    *,
    shop: Shop,
    actor: Actor,
    api_key: str,
    livemode: bool,
    webhook_secret: str | None,
    box: SecretBox,
    now: datetime,
    webhook_base_url: str | None = None,
    api_base: str | None = None,
    timeout_seconds: float = 20.0,
) -> StripeConnected:
    """Save the shop's Stripe key; with ``webhook_base_url``, no ``webhook_secret`` and
    none stored yet, also register the webhook endpoint at Stripe and keep its secret."""
    require_role(session, shop.id, actor, StaffRole.OWNER_ONLY, said("connect providers"))
    adapter = _stripe_adapter(api_key, livemode, api_base, timeout_seconds)
    if webhook_secret is not None:
        text(webhook_secret, "webhook_secret", max_length=MAX_KEY_LENGTH, required=True)
        if not webhook_secret.startswith("whsec_"):
            raise InvalidInput(
                said("a Stripe webhook signing secret starts with whsec_"),
                field="webhook_secret",
            )
    connection = session.scalars(
        select(Connection).where(Connection.shop_id == shop.id, Connection.provider == "stripe")
    ).one_or_none()
    connection_id = connection.id if connection is not None else uuid.uuid4()

    registered: tuple[str, str] | None = None
    has_secret = connection is not None and connection.encrypted_webhook_secret is not None
    if webhook_secret is None and not has_secret and webhook_base_url:
        # The outside call comes before any write: if Stripe refuses, nothing is stored.
        url = stripe_webhook_url(webhook_base_url, connection_id)
        endpoint_id, webhook_secret = _register_endpoint(adapter, url)
        registered = (endpoint_id, url)

    if connection is None:
        connection = Connection(id=connection_id, shop_id=shop.id, provider="stripe")
        session.add(connection)
    connection.livemode = livemode
    connection.encrypted_secret = box.encrypt(api_key)
    connection.key_hint = mask_secret(api_key)
    if webhook_secret is not None:
        connection.encrypted_webhook_secret = box.encrypt(webhook_secret)
    record_saved(session, connection, actor=actor, now=now, livemode=livemode)
    if registered is not None:
        endpoint_id, url = registered
        audit.record(
            session,
            shop_id=shop.id,
            kind="connection.webhook_registered",
            actor=actor,
            data={
                "provider": "stripe",
                "endpoint_id": endpoint_id,
                "url": url,
                "events": list(WEBHOOK_EVENTS),
            },
            now=now,
        )
    return StripeConnected(connection, webhook_registered=registered is not None)


def check_stripe_key(
    session: Session,
    *,
    shop: Shop,
    actor: Actor,
    api_key: str,
    livemode: bool,
    api_base: str | None = None,
    timeout_seconds: float = 20.0,
) -> PermissionReport:
    """Which permissions Caseward needs the key holds, asked of Stripe; owners only.

    The key is refused as :func:`save_stripe_connection` refuses it (``api_key``), and
    also when Stripe does not know it. Nothing is stored or audited.
    """
    require_role(session, shop.id, actor, StaffRole.OWNER_ONLY, said("test provider keys"))
    adapter = _stripe_adapter(api_key, livemode, api_base, timeout_seconds)
    try:
        return adapter.check_permissions()
    except CredentialsRefused as exc:
        raise InvalidInput(key_refused(exc), field="api_key") from exc


def key_refused(refused: CredentialsRefused) -> Sentence:
    """Why a Stripe key is refused, in Caseward's words; a reason this does not know is
    said with the adapter's own text."""
    key = refused.key
    if refused.reason in ("secret_key", "not_restricted"):
        create = said(
            "Create a restricted key (rk_live_... or rk_test_...) in the Stripe dashboard "
            "with these permissions: %(permissions)s.",
            permissions=REQUIRED_PERMISSIONS,
        )
        if refused.reason == "secret_key":
            return said(
                "Caseward does not accept secret keys (%(key)s): a secret key can do "
                "anything on the account. %(create)s",
                key=key,
                create=create,
            )
        return said("%(key)s is not a Stripe restricted key. %(create)s", key=key, create=create)
    if refused.reason == "test_key_in_live_mode":
        return said(
            "The key %(key)s is a test-mode key but the shop is in live mode. "
            "Use a live restricted key (rk_live_...).",
            key=key,
        )
    if refused.reason == "live_key_in_test_mode":
        return said(
            "The key %(key)s is a live-mode key but the shop is in test mode. "
            "Use a test restricted key (rk_test_...).",
            key=key,
        )
    if refused.reason == "unknown_key":
        return said(
            "Stripe does not know the key %(key)s: check that it was copied whole and has "
            "not been rolled or deleted in the Stripe dashboard.",
            key=key,
        )
    return said("%(refusal)s", refusal=str(refused))


def permission_advice(report: PermissionReport) -> Sentence:
    """One sentence for the merchant: what to add in Stripe's dashboard, or to test the
    key again when Stripe did not answer. Settings keep the dashboard's own names."""
    if report.ok:
        return said("The key has every permission Caseward needs.")
    unanswered = ", ".join(report.settings_unanswered())
    if not report.missing:
        return said(
            "Stripe did not answer for %(settings)s, so test the key again in a moment.",
            settings=unanswered,
        )
    missing = ", ".join(report.settings_to_add())
    if not report.unknown:
        return said(
            "In the Stripe dashboard, edit this restricted key and set %(settings)s.",
            settings=missing,
        )
    return said(
        "In the Stripe dashboard, edit this restricted key and set %(settings)s; Stripe did "
        "not answer for %(unanswered)s, so test the key again in a moment.",
        settings=missing,
        unanswered=unanswered,
    )


def _stripe_adapter(
    api_key: str, livemode: bool, api_base: str | None, timeout_seconds: float
) -> StripeAdapter:
    """An adapter on ``api_key``, refused as ``api_key`` unless it is a restricted key of
    the shop's mode."""
    text(api_key, "api_key", max_length=MAX_KEY_LENGTH, required=True)
    try:
        return StripeAdapter(
            api_key, livemode=livemode, api_base=api_base, timeout_seconds=timeout_seconds
        )
    except CredentialsRefused as exc:
        raise InvalidInput(key_refused(exc), field="api_key") from exc


def _register_endpoint(adapter: StripeAdapter, url: str) -> tuple[str, str]:
    try:
        return adapter.register_webhook_endpoint(url, WEBHOOK_EVENTS)
    except PermissionDenied as exc:
        # The message names the permission the key lacks (rak_webhook_write).
        raise InvalidInput(str(exc), field="api_key", code="permission_denied") from exc
    except CredentialsRefused as exc:
        raise InvalidInput(key_refused(exc), field="api_key") from exc
    except ProviderRejected as exc:
        raise InvalidInput(str(exc), field="api_key") from exc
    except ProviderError as exc:
        raise ProviderUnavailable(
            said(
                "Stripe did not confirm the webhook endpoint; nothing was saved: %(stripe_said)s",
                stripe_said=str(exc),
            )
        ) from exc
