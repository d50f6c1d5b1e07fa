"""The brakes and the alerts in the embedded admin.

The day's page opens on a tripped brake: why, since when, how many actions it holds with
their money, that approving meanwhile is allowed, and a Resume button for an owner or an
approver (none for a viewer). The settings page shows the brakes and where alerts go, with
the forms for an owner, and never the Slack webhook's address.
"""

from __future__ import annotations

import pytest
from admin_pages_support import (
    APPROVER,
    OWNER,
    VIEWER,
    a_case,
    a_proposal,
    a_shop,
    an_action,
    api,
    open_page,
    text_of,
)
from flask.testing import FlaskClient
from sqlalchemy.orm import Session

from app.clock import utcnow
from app.connections.models import Connection
from app.execution.brakes import BrakeSettings, locked_brakes
from app.settings import Settings
from app.shops.models import Shop
from app.words import said_n

HOOK = "https://hooks.slack.com/services/TLINEN/BALERTS/secret-part-wxyz"


@pytest.fixture
def shop(session: Session, settings: Settings) -> Shop:
    """Set up (Stripe connected, writes on): the app opens on the day's page."""
    shop = a_shop(session, settings, "linen")
    session.add(
        Connection(
            shop_id=shop.id,
            provider="stripe",
            livemode=False,
            encrypted_secret=b"unused",
            key_hint="rk_test_...inen",
            created_by=OWNER,
        )
    )
    session.commit()
    return shop


def _tripped(session: Session, shop: Shop, held: tuple[int, ...]) -> None:
    """The breaker tripped on the shop, with actions of ``held`` cents queued behind it."""
    case = a_case(session, shop, "Torn apron")
    for amount in held:
        an_action(session, shop, case, a_proposal(session, shop, case, amount=amount), "queued")
    brakes = locked_brakes(session, shop.id)
    brakes.tripped_at, brakes.tripped_rule = utcnow(), "failures_in_a_row"
    brakes.tripped_reason = said_n(
        "%(count)s send in a row failed or came back unclear",
        "%(count)s sends in a row failed or came back unclear",
        3,
    ).to_dict()
    session.commit()


def _banner(page: str) -> str:
    start = page.index('<s-banner tone="critical" id="brake">')
    return page[start : page.index("</s-banner>", start)]


def test_the_day_opens_on_a_tripped_brake_with_what_it_holds_and_who_may_resume(
    client: FlaskClient, session: Session, shop: Shop
) -> None:
    assert 'id="brake"' not in text_of(open_page(client, shop, OWNER, "/app"))
    _tripped(session, shop, (4800, 1200))

    page = text_of(open_page(client, shop, OWNER, "/app"))

    banner = _banner(page)
    assert page.index('id="brake"') < page.index("What needs someone")
    assert "Sending is paused" in banner
    assert ": 3 sends in a row failed or came back unclear." in banner
    assert "2 actions are held ($60.00)." in banner
    assert "Approving a proposal meanwhile is allowed" in banner
    assert 'data-url="/api/shop/brakes/resume"' in banner
    assert "Resume sending" in _banner(text_of(open_page(client, shop, APPROVER, "/app")))
    as_viewer = _banner(text_of(open_page(client, shop, VIEWER, "/app")))
    assert "Resume sending" not in as_viewer
    assert "An owner or an approver can resume it." in as_viewer

    # The button's request, as the page's script sends it.
    resumed = api(client, shop, APPROVER, "POST", "/api/shop/brakes/resume", {})
    assert resumed.status_code == 200, resumed.get_json()
    assert len(resumed.get_json()["resumed"]) == 2
    assert 'id="brake"' not in text_of(open_page(client, shop, OWNER, "/app"))


def test_the_settings_page_shows_the_brakes_and_where_alerts_go(
    client: FlaskClient, session: Session, shop: Shop
) -> None:
    page = text_of(open_page(client, shop, OWNER, "/app/settings"))
    assert 'class="brakes"' in page
    assert 'name="failures_in_a_row" type="number" min="1" max="100" value="3"' in page
    assert 'name="error_window" type="number" min="2" max="100" required value="20"' in page
    assert "Not tripped" in page
    assert "Slack: Not set up." in page.replace("</s-badge> ", ": ")

    ceilings = {
        **BrakeSettings().to_dict(),
        "money_per_hour": {"usd": 50000},
        "actions_per_hour": 20,
    }
    assert api(client, shop, OWNER, "PUT", "/api/shop/brakes", ceilings).status_code == 200
    hooked = api(client, shop, OWNER, "PUT", "/api/shop/alerts", {"slack_webhook_url": HOOK})
    assert hooked.status_code == 200, hooked.get_json()

    page = text_of(open_page(client, shop, OWNER, "/app/settings"))
    assert 'name="money_per_hour" value="USD 500.00"' in page
    assert 'name="actions_per_hour" type="number" min="1" value="20"' in page
    assert "Posting to hooks.slack.com/…wxyz:" in page
    assert HOOK not in page
    as_viewer = text_of(open_page(client, shop, VIEWER, "/app/settings"))
    assert 'class="brakes"' not in as_viewer and 'class="slack"' not in as_viewer
    assert "Money sent per hour: USD 500.00" in as_viewer
    assert "Actions sent per day: no ceiling" in as_viewer
    assert "Paused after 3 failed or unclear sends in a row." in as_viewer
    assert "Only an owner changes the brakes." in as_viewer
    assert HOOK not in as_viewer
