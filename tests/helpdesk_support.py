"""A shop's Gorgias account, kept as the owner's save keeps it, for tests with no Gorgias to
read it back from."""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.actors import Surface, staff
from app.clock import utcnow
from app.crypto import secret_box
from app.helpdesk.connection import GorgiasConnected, save_gorgias_connection
from app.settings import Settings
from app.shops.models import Shop


def connect_gorgias(
    session: Session, shop: Shop, settings: Settings, *, owner: str, account: str
) -> GorgiasConnected:
    """``account`` (``NAME`` of ``NAME.gorgias.com``) saved by ``owner``, unchecked."""
    return save_gorgias_connection(
        session,
        shop=shop,
        actor=staff(owner, Surface.STAFF_API),
        domain=account,
        username="api@linen.example",
        api_key="gorgias-api-key-0123456789",
        box=secret_box(settings),
        check=lambda _account: None,
        now=utcnow(),
    )
