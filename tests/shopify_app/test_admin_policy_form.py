"""The policy as a form an owner fills in: amounts in the shop's currency as people write
them, windows in days, percents, the most one refund, credit or discount may move; each field
that cannot be read refused by its name with nothing saved; every version listed with who
saved it and what it changed, in words. A fresh policy opens in the store's own currency."""

from __future__ import annotations

import re
from typing import Any

import pytest
from admin_pages_support import APPROVER, OWNER, VIEWER, a_shop, api, open_page, text_of
from flask.testing import FlaskClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.settings import Settings
from app.shops.models import Shop, ShopPolicy, StaffMember
from app.shops.service import current_policy
from integrations.provider import ActionKind

FORM = {
    "currency": "usd",
    "enabled_kinds": ["refund", "customer_credit"],
    "auto_approve_ceiling": "20.00",
    "two_person_threshold": "200.00",
    "refund_ceiling": "150.00",
    "customer_credit_ceiling": "",
    "discount_ceiling": "25.00",
    "per_customer_cap": "300.00",
    "per_customer_cap_days": "30",
    "per_shop_cap": "",
    "per_shop_cap_days": "",
    "duplicate_window_days": "3",
    "refund_window_days": "30",
    "max_percent_off": "40",
    "store_credit_bonus_percent": "10",
    "replacement_discount": True,
    "handover_owner": "jo@linen.example",
}


@pytest.fixture
def shop(session: Session, settings: Settings) -> Shop:
    return a_shop(session, settings, "linen")


def _save(client: FlaskClient, shop: Shop, form: dict[str, Any], user: str = OWNER) -> Any:
    return api(client, shop, user, "PUT", "/api/shop/policy/form", form)


def test_an_owner_saves_the_policy_in_dollars_and_days_and_the_checks_get_minor_units(
    client: FlaskClient, session: Session, shop: Shop
) -> None:
    answer = _save(client, shop, FORM)

    assert answer.status_code == 200, answer.get_json()
    session.expire_all()
    policy = current_policy(session, shop.id)
    assert policy.version == 2  # after the defaults every shop starts with (version 1)
    assert (policy.auto_approve_ceiling, policy.two_person_threshold) == (
        {"usd": 2000},
        {"usd": 20000},
    )
    assert policy.per_customer_cap is not None
    assert (policy.per_customer_cap.limit.amount, policy.per_customer_cap.period.days) == (
        30000,
        30,
    )
    assert policy.per_shop_cap is None
    assert policy.kind_ceilings == {
        ActionKind.REFUND: {"usd": 15000},
        ActionKind.DISCOUNT: {"usd": 2500},
    }
    assert (policy.duplicate_window.days, policy.refund_window_days) == (3, 30)
    assert (policy.max_percent_off, policy.store_credit_bonus_percent) == (40, 10)
    assert policy.replacement_discount and policy.handover_owner == "jo@linen.example"
    assert sorted(policy.enabled_kinds) == ["customer_credit", "refund"]


def test_the_form_opens_filled_in_from_the_current_version(client: FlaskClient, shop: Shop) -> None:
    _save(client, shop, FORM)

    page = text_of(open_page(client, shop, OWNER, "/app/policy"))

    assert re.search(r'name="two_person_threshold" value="200.00"', page)
    assert re.search(r'name="per_customer_cap_days" value="30"', page)
    assert re.search(r'name="refund_ceiling" value="150.00"', page)
    assert re.search(r'name="customer_credit_ceiling" value=""', page)
    assert re.search(r'name="duplicate_window_days" value="3"', page)
    assert re.search(r'value="refund" checked', page) and not re.search(
        r'value="discount" checked', page
    )


def test_a_currency_without_decimals_is_written_as_whole_yen(
    client: FlaskClient, session: Session, shop: Shop
) -> None:
    answer = _save(client, shop, {**FORM, "currency": "jpy", "two_person_threshold": "20000"})

    assert answer.status_code == 200, answer.get_json()
    session.expire_all()
    assert current_policy(session, shop.id).two_person_threshold == {"jpy": 20000}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"two_person_threshold": "200.005"}, "two_person_threshold"),
        ({"auto_approve_ceiling": "twenty"}, "auto_approve_ceiling"),
        ({"refund_ceiling": "12.345"}, "refund_ceiling"),
        ({"customer_credit_ceiling": "-5.00"}, "customer_credit_ceiling"),
        ({"discount_ceiling": "0"}, "discount_ceiling"),
        ({"refund_window_days": "0"}, "refund_window_days"),
        ({"duplicate_window_days": ""}, "duplicate_window_days"),
        ({"max_percent_off": "140"}, "max_percent_off"),
        ({"per_customer_cap_days": ""}, "per_customer_cap_days"),
        ({"per_shop_cap": "50.00"}, "per_shop_cap_days"),
        ({"currency": "dollars"}, "currency"),
        ({"enabled_kinds": ["refund", "gift"]}, "enabled_kinds"),
    ],
)
def test_a_field_that_cannot_be_read_is_refused_by_name_and_nothing_is_saved(
    client: FlaskClient, session: Session, shop: Shop, change: dict[str, Any], field: str
) -> None:
    answer = _save(client, shop, {**FORM, **change})

    assert answer.status_code == 400
    assert answer.get_json()["error"]["field"] == field
    assert session.scalars(select(ShopPolicy).where(ShopPolicy.shop_id == shop.id)).all() == []


@pytest.mark.parametrize("user", [APPROVER, VIEWER])
def test_only_an_owner_opens_the_policy_page_or_saves_it(
    client: FlaskClient, shop: Shop, user: str
) -> None:
    assert open_page(client, shop, user, "/app/policy").status_code == 403
    assert _save(client, shop, FORM, user).status_code == 403


def test_each_version_says_who_saved_it_and_what_it_changed(
    client: FlaskClient, session: Session, shop: Shop
) -> None:
    owner = session.scalars(
        select(StaffMember).where(StaffMember.shop_id == shop.id, StaffMember.user_id == OWNER)
    ).one()
    owner.name = "Ana Ruiz"
    session.commit()
    _save(client, shop, FORM)
    _save(client, shop, {**FORM, "max_percent_off": "25"})

    page = text_of(open_page(client, shop, OWNER, "/app/policy"))

    versions = re.findall(r'<article class="version" data-version="(\d+)">', page)
    assert versions == ["3", "2"]
    newest = page[page.index('data-version="3"') : page.index('data-version="2"')]
    assert "Version 3, by Ana Ruiz on" in newest
    assert re.search(r"<del>[^<]*40%[^<]*</del>", newest)
    assert re.search(r"<ins>[^<]*25%[^<]*</ins>", newest)


def test_a_saved_ceiling_shows_in_the_version_diff(
    client: FlaskClient, session: Session, shop: Shop
) -> None:
    _save(client, shop, FORM)
    _save(client, shop, {**FORM, "refund_ceiling": "120.00", "discount_ceiling": ""})

    page = text_of(open_page(client, shop, OWNER, "/app/policy"))

    newest = page[page.index('data-version="3"') : page.index('data-version="2"')]
    assert "<del>No single refund above $150.00.</del>" in newest
    assert "<ins>No single refund above $120.00.</ins>" in newest
    assert "<del>No single discount of an amount off above $25.00.</del>" in newest
    first = page[page.index('data-version="2"') :]
    assert "<ins>No single refund above $150.00.</ins>" in first


def test_ceilings_in_other_currencies_are_kept_when_the_form_saves_in_one(
    client: FlaskClient, session: Session, shop: Shop
) -> None:
    rules = {"kind_ceilings": {"refund": {"eur": 9000}, "customer_credit": {"gbp": 4000}}}
    assert api(client, shop, OWNER, "PUT", "/api/shop/policy", {"rules": rules}).status_code == 200

    answer = _save(client, shop, FORM)

    assert answer.status_code == 200, answer.get_json()
    assert answer.get_json()["policy"]["kind_ceilings"] == {
        "customer_credit": {"gbp": 4000},
        "discount": {"usd": 2500},
        "refund": {"eur": 9000, "usd": 15000},
    }


def test_a_shop_selling_in_yen_opens_a_fresh_policy_in_whole_yen(
    client: FlaskClient, session: Session, shop: Shop
) -> None:
    shop.currency = "jpy"  # as Shopify reported it at the install
    session.commit()

    page = text_of(open_page(client, shop, OWNER, "/app/policy"))

    assert re.search(r'name="currency" value="jpy"', page)
    assert re.search(r'name="refund_ceiling" value="" [^>]*placeholder="4800"', page)
    assert "4800.00" not in page and "48.00" not in page
    refused = _save(client, shop, {**FORM, "currency": "jpy", "refund_ceiling": "15000.50"})
    assert refused.status_code == 400
    assert refused.get_json()["error"]["field"] == "refund_ceiling"
    assert "such as 4800" in refused.get_json()["error"]["message"]
