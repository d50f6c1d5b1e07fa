"""The abuse signals on the policy form: each threshold saved as the owner writes it (blank
turns a signal off), the form opening with them filled in, a threshold that cannot be read
refused by its name with nothing saved, a client that leaves them out keeping them, and
every change said in words in the version's diff."""

from __future__ import annotations

import re
from typing import Any

import pytest
from admin_pages_support import OWNER, a_shop, api, open_page, text_of
from flask.testing import FlaskClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.guard import SignalRules
from app.settings import Settings
from app.shops.models import Shop, ShopPolicy
from app.shops.service import current_policy

FORM = {
    "currency": "usd",
    "enabled_kinds": ["refund", "customer_credit"],
    "duplicate_window_days": "3",
    "max_percent_off": "40",
    "history_needed": "10",
    "repeat_claims": "4",
    "repeat_claims_percent": "",
    "old_delivery_days": "45",
    "delivered_but_not_received": False,
    "new_customer_amount": "150.00",
    "new_customer_days": "14",
    "shared_email_customers": "2",
}


@pytest.fixture
def shop(session: Session, settings: Settings) -> Shop:
    return a_shop(session, settings, "linen")


def _save(client: FlaskClient, shop: Shop, form: dict[str, Any]) -> Any:
    return api(client, shop, OWNER, "PUT", "/api/shop/policy/form", form)


def test_the_owner_sets_each_signal_and_the_checks_get_its_threshold(
    client: FlaskClient, session: Session, shop: Shop
) -> None:
    answer = _save(client, shop, FORM)

    assert answer.status_code == 200, answer.get_json()
    session.expire_all()
    assert current_policy(session, shop.id).signals == SignalRules(
        history_needed=10,
        repeat_claims=4,
        repeat_claims_percent=None,
        old_delivery_days=45,
        delivered_but_not_received=False,
        new_customer_amount={"usd": 15_000},
        new_customer_days=14,
        shared_email_customers=2,
    )
    assert answer.get_json()["policy"]["signals"]["new_customer_amount"] == {"usd": 15_000}


def test_the_form_opens_with_the_signals_filled_in(client: FlaskClient, shop: Shop) -> None:
    _save(client, shop, FORM)

    page = text_of(open_page(client, shop, OWNER, "/app/policy"))

    assert "<legend>Abuse signals</legend>" in page
    assert re.search(r'name="repeat_claims" value="4"', page)
    assert re.search(r'name="repeat_claims_percent" value=""', page)
    assert re.search(r'name="new_customer_amount" value="150.00"', page)
    assert re.search(r'name="delivered_but_not_received">', page)  # not checked


def test_a_fresh_policy_opens_with_the_default_signals(client: FlaskClient, shop: Shop) -> None:
    page = text_of(open_page(client, shop, OWNER, "/app/policy"))

    assert re.search(r'name="history_needed" value="30"', page)
    assert re.search(r'name="repeat_claims" value="3"', page)
    assert re.search(r'name="delivered_but_not_received" checked', page)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"repeat_claims": "0"}, "repeat_claims"),
        ({"repeat_claims": "three"}, "repeat_claims"),
        ({"repeat_claims_percent": "150"}, "repeat_claims_percent"),
        ({"history_needed": "-1"}, "history_needed"),
        ({"old_delivery_days": "400"}, "old_delivery_days"),
        ({"new_customer_amount": "150.005"}, "new_customer_amount"),
        ({"new_customer_days": "0"}, "new_customer_days"),
        ({"shared_email_customers": "1.5"}, "shared_email_customers"),
        ({"delivered_but_not_received": "yes"}, "delivered_but_not_received"),
    ],
)
def test_a_threshold_that_cannot_be_read_is_refused_by_name_and_nothing_is_saved(
    client: FlaskClient, session: Session, shop: Shop, change: dict[str, Any], field: str
) -> None:
    answer = _save(client, shop, {**FORM, **change})

    assert answer.status_code == 400
    assert answer.get_json()["error"]["field"] == field
    assert session.scalars(select(ShopPolicy).where(ShopPolicy.shop_id == shop.id)).all() == []


def test_a_client_that_leaves_the_signals_out_keeps_them(
    client: FlaskClient, session: Session, shop: Shop
) -> None:
    _save(client, shop, FORM)
    without = {name: value for name, value in FORM.items() if name not in SignalRules().to_dict()}

    answer = _save(client, shop, {**without, "max_percent_off": "30"})

    assert answer.status_code == 200, answer.get_json()
    session.expire_all()
    policy = current_policy(session, shop.id)
    assert policy.max_percent_off == 30
    assert (policy.signals.repeat_claims, policy.signals.old_delivery_days) == (4, 45)


def test_a_signal_changed_shows_in_the_version_diff_in_words(
    client: FlaskClient, shop: Shop
) -> None:
    _save(client, shop, FORM)
    _save(client, shop, {**FORM, "repeat_claims": "", "delivered_but_not_received": True})

    page = text_of(open_page(client, shop, OWNER, "/app/policy"))

    newest = page[page.index('data-version="3"') : page.index('data-version="2"')]
    assert (
        "<del>A person decides for a customer already refunded or credited 4 times in 90 "
        "days.</del>"
    ) in newest
    assert (
        "<ins>A person decides when the customer says an order never arrived that the carrier "
        "marked delivered.</ins>"
    ) in newest
    first = page[page.index('data-version="2"') :]
    assert (
        "<ins>A person decides for a new customer (one order, or a first order within 14 days) "
        "asking for more than $150.00.</ins>"
    ) in first
