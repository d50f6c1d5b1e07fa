"""Installing, refreshing and uninstalling the app in a shop.

Shopify installs embedded apps itself (managed installation from ``shopify.app.toml``);
the app learns of a new shop from the first session token it sees and exchanges that
token for an offline access token. The sequence:

1. A verified admin request names a shop with no install row: the web layer exchanges
   the session token (:mod:`integrations.shopify.auth`), asks Shopify with the new token
   which currency the store sells in (:func:`shop_currency`) and calls
   :func:`record_install`, which creates the shop (read-only, protection mode on) or, for
   a shop that was uninstalled, reinstalls it: read-only again, new tokens, every case,
   action and audit event kept. Shopify not saying the currency does not stop the
   install: the currency stays unknown until the next install or token refresh.
2. Each person's first verified request admits them (:func:`admit_staff_member`): the
   store's account owner as owner, everyone else as viewer. Shopify says who the
   account owner is only in an online token exchange, so the web layer asks once per
   new person.
3. Before each use, :func:`usable_token` hands out the stored token, refreshed under the
   install row's lock when it is about to expire (Shopify's package decides: within a
   minute of expiry): refresh tokens are single-use, so two workers must never refresh
   with the same one. A shop whose currency is still unknown is asked with the new token.
4. ``app/uninstalled`` (at least once, maybe twice) calls :func:`record_uninstall`: the
   tokens are deleted, the shop is marked, nothing more is sent; a repeat changes nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

import httpx
from sqlalchemy import select
from sqlalchemy.orm import Session

from app import audit
from app.actors import Actor, Surface, staff, system_actor
from app.crypto import SecretBox
from app.money import MoneyError, normalise_currency
from app.shopify.models import ShopifyInstall
from app.shops.models import Shop, StaffMember, StaffRole
from integrations.shopify.auth import OfflineToken
from integrations.shopify.documents import SHOP, read_shop
from integrations.shopify.errors import ShopifyError
from integrations.shopify.graphql import AdminClient

_log = logging.getLogger(__name__)
# Shopify itself, reporting through its signed webhooks or answering about the shop.
SHOPIFY = system_actor("shopify", Surface.PROVIDER)


def installed_shop(session: Session, domain: str) -> tuple[Shop, ShopifyInstall] | None:
    """The shop and its live install, or None if the app is not installed there now."""
    row = session.execute(
        select(Shop, ShopifyInstall)
        .join(ShopifyInstall, ShopifyInstall.shop_id == Shop.id)
        .where(Shop.domain == domain)
    ).first()
    return None if row is None else (row[0], row[1])


def shop_currency(domain: str, token: OfflineToken, http_client: httpx.Client) -> str | None:
    """The currency the store sells in (Admin GraphQL ``shop { currencyCode }``), lower
    case; None, logged, when Shopify does not answer it now."""
    # Throttled: not waited for. An install is not held up for it, and the next asks again.
    client = AdminClient(domain, token.token, http_client, max_throttle_retries=0)
    try:
        shop = read_shop(client.execute(SHOP, operation_name="Shop").data)
        return normalise_currency(shop.currency)
    except (ShopifyError, MoneyError) as failed:
        _log.warning("the currency of %s stays unknown for now: %s", domain, failed)
        return None


def record_install(
    session: Session,
    *,
    domain: str,
    token: OfflineToken,
    currency: str | None,
    installer: Actor,
    installer_is_account_owner: bool,
    installer_email: str | None,
    box: SecretBox,
    now: datetime,
    installer_name: str | None = None,
) -> Shop:
    """Store the exchanged token; create or reinstall the shop as the sequence says.

    ``currency`` is the store's as :func:`shop_currency` read it; None keeps what the shop
    had."""
    shop = session.scalars(select(Shop).where(Shop.domain == domain)).one_or_none()
    reinstall = shop is not None
    if shop is None:
        shop = Shop(domain=domain, name=domain.removesuffix(".myshopify.com"), created_at=now)
        session.add(shop)
        session.flush()
    elif shop.uninstalled_at is not None:
        # A reinstall starts read-only, whatever it was before the uninstall.
        shop.uninstalled_at = None
        shop.writes_enabled, shop.writes_enabled_by, shop.writes_enabled_at = False, None, None
    if currency is not None:
        shop.currency = currency
    install = session.get(ShopifyInstall, shop.id)
    if install is None:
        install = ShopifyInstall(shop_id=shop.id, installed_at=now)
        session.add(install)
    _store_token(install, token, box)
    audit.record(
        session,
        shop_id=shop.id,
        kind="shop.reinstalled" if reinstall else "shop.installed",
        actor=installer,
        data={
            "scopes": token.scope,
            "expiring_token": token.expires_at is not None,
            "currency": shop.currency,
        },
        now=now,
    )
    admit_staff_member(
        session,
        shop,
        installer,
        is_account_owner=installer_is_account_owner,
        email=installer_email,
        name=installer_name,
        now=now,
    )
    return shop


def record_uninstall(session: Session, *, domain: str, now: datetime) -> bool:
    """Forget the tokens and mark the shop; returns False when it was already done."""
    shop = session.scalars(select(Shop).where(Shop.domain == domain)).one_or_none()
    if shop is None:
        return False
    install = session.get(ShopifyInstall, shop.id, with_for_update=True)
    if install is None and shop.uninstalled_at is not None:
        return False
    if install is not None:
        session.delete(install)
    shop.uninstalled_at = now
    audit.record(session, shop_id=shop.id, kind="shop.uninstalled", actor=SHOPIFY, now=now)
    session.flush()
    return True


def usable_token(
    session: Session,
    shop: Shop,
    *,
    box: SecretBox,
    refresh: Callable[[OfflineToken], OfflineToken],
    currency_of: Callable[[OfflineToken], str | None],
    now: datetime,
) -> OfflineToken:
    """The shop's offline token, refreshed first when it is about to expire.

    ``refresh`` is :meth:`integrations.shopify.auth.ShopifyAuth.refresh_if_needed`, which
    hands back the same token until a refresh is due; ``currency_of`` reads the store's
    currency with a new token (:func:`shop_currency`), asked only while it is unknown.
    The install row stays locked until the caller's transaction ends, so a concurrent
    caller waits and then reads the new token instead of spending the old refresh token.
    """
    install = session.get(ShopifyInstall, shop.id, with_for_update=True, populate_existing=True)
    if install is None:
        raise LookupError(f"the app is not installed in {shop.domain}")
    token = _load_token(shop.domain, install, box)
    if token.expires_at is None:
        return token
    fresh = refresh(token)
    if fresh is not token:  # a new token: the old refresh token is spent, keep the new one
        _store_token(install, fresh, box)
        install.refreshed_at = now
        if shop.currency is None:
            _learn_currency(session, shop, currency_of(fresh), now)
        session.flush()
    return fresh


def _learn_currency(session: Session, shop: Shop, currency: str | None, now: datetime) -> None:
    if currency is None:
        return
    shop.currency = currency
    audit.record(
        session,
        shop_id=shop.id,
        kind="shop.currency_learned",
        actor=SHOPIFY,
        data={"currency": currency},
        now=now,
    )


def _store_token(install: ShopifyInstall, token: OfflineToken, box: SecretBox) -> None:
    install.encrypted_access_token = box.encrypt(token.token)
    install.scopes = token.scope
    install.access_token_expires_at = token.expires_at
    install.encrypted_refresh_token = (
        box.encrypt(token.refresh_token) if token.refresh_token else None
    )
    install.refresh_token_expires_at = token.refresh_token_expires_at


def _load_token(domain: str, install: ShopifyInstall, box: SecretBox) -> OfflineToken:
    return OfflineToken(
        shop=domain,
        token=box.decrypt(install.encrypted_access_token),
        scope=install.scopes,
        expires_at=install.access_token_expires_at,
        refresh_token=(
            box.decrypt(install.encrypted_refresh_token)
            if install.encrypted_refresh_token
            else None
        ),
        refresh_token_expires_at=install.refresh_token_expires_at,
    )


def admit_staff_member(
    session: Session,
    shop: Shop,
    who: Actor,
    *,
    is_account_owner: bool,
    email: str | None,
    now: datetime,
    name: str | None = None,
) -> StaffMember:
    """The person's membership, created on their first visit: the store's account owner
    as owner, anyone else as viewer until an owner says otherwise (deny by default). Their
    name and email are Shopify's, as its online token exchange reports them."""
    member = session.scalars(
        select(StaffMember).where(StaffMember.shop_id == shop.id, StaffMember.user_id == who.id)
    ).one_or_none()
    if member is not None:
        return member
    role = StaffRole.OWNER if is_account_owner else StaffRole.VIEWER
    # "" when Shopify has no name for them: asked once, not on every visit.
    member = StaffMember(
        shop_id=shop.id, user_id=who.id, email=email, name=name or "", role=role, created_at=now
    )
    session.add(member)
    session.flush()
    audit.record(
        session,
        shop_id=shop.id,
        kind="staff.joined",
        actor=who,
        data={"user_id": who.id, "role": role, "account_owner": is_account_owner},
        now=now,
    )
    return member


def name_staff_member(
    session: Session, member: StaffMember, *, name: str | None, now: datetime
) -> None:
    """``member``'s name as Shopify reports it ("" when it has none, so it is asked once)."""
    member.name = name or ""
    if name:
        audit.record(
            session,
            shop_id=member.shop_id,
            kind="staff.named",
            actor=staff(member.user_id, Surface.SHOPIFY_ADMIN),
            data={"user_id": member.user_id, "name": name},
            now=now,
        )
