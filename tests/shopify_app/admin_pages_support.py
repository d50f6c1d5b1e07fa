"""The embedded admin's pages in tests: a shop with its three kinds of staff, pages opened
as Shopify frames them, and API calls as the pages' scripts make them."""

from __future__ import annotations

import base64
import html
from typing import Any
from urllib.parse import urlencode

from flask.testing import FlaskClient
from shopify_app_support import bearer, install_shop, session_token
from sqlalchemy.orm import Session

from app.settings import Settings
from app.shops.models import Shop, StaffMember, StaffRole

OWNER, APPROVER, VIEWER = "1001", "1002", "1003"


def a_shop(session: Session, settings: Settings, name: str) -> Shop:
    """An installed shop with writes on, an owner who may approve up to $100.00, an
    approver with no limit yet and a viewer."""
    shop = install_shop(session, settings, name).shop
    shop.writes_enabled = True
    session.add_all(
        [
            StaffMember(
                shop_id=shop.id,
                user_id=OWNER,
                role=StaffRole.OWNER,
                approval_limits={"usd": 10000},
            ),
            StaffMember(
                shop_id=shop.id, user_id=APPROVER, role=StaffRole.APPROVER, approval_limits={}
            ),
            StaffMember(shop_id=shop.id, user_id=VIEWER, role=StaffRole.VIEWER),
        ]
    )
    session.commit()
    return shop


def page_url(shop: str, path: str, token: str, **query: str) -> str:
    """An admin page as Shopify frames it: its own query, then the session token."""
    host = base64.urlsafe_b64encode(
        f"admin.shopify.com/store/{shop.removesuffix('.myshopify.com')}".encode()
    )
    params = {"embedded": "1", "shop": shop, "host": host.decode().rstrip("="), **query}
    return f"{path}?{urlencode({**params, 'id_token': token})}"


def open_page(client: FlaskClient, shop: Shop, user: str, path: str, **query: str) -> Any:
    return client.get(page_url(shop.domain, path, session_token(shop.domain, user), **query))


def api(client: FlaskClient, shop: Shop, user: str, method: str, url: str, body: object) -> Any:
    """A call as the pages' scripts make it: JSON, with App Bridge's bearer session token."""
    return client.open(
        url, method=method, json=body, headers=bearer(session_token(shop.domain, user))
    )


def text_of(response: Any) -> str:
    """A page's HTML as a person reads its text (entities decoded); the page must be there."""
    assert response.status_code == 200, response.get_data(as_text=True)[:800]
    return html.unescape(response.get_data(as_text=True))
