"""The admin a merchant opens every morning: the day's page says what needs someone, with
the money, and how the week went; the cases page finds a case by its number, an order, the
customer or the subject, by status, owner and day opened, a page at a time, within the
shop alone."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from admin_pages_support import (
    APPROVER,
    OWNER,
    VIEWER,
    a_case,
    a_customer,
    a_proposal,
    a_shop,
    an_action,
    open_page,
    text_of,
)
from flask.testing import FlaskClient
from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session

from app.actors import DRAFTER, Surface, staff, system_actor
from app.cases.models import Case, CaseStatus
from app.cases.proposals import Approval
from app.clock import utcnow
from app.connections.models import Connection
from app.conversations.models import Channel
from app.conversations.service import (
    add_reply,
    messages_of,
    receive_message,
    start_conversation,
)
from app.db import Base
from app.guard import CapRule, PolicyRules
from app.inbox.queue import QUEUE_LENGTH, CaseSearch, case_queue
from app.inbox.today import today
from app.money import Money
from app.settings import Settings
from app.shops.models import Shop, StaffMember, StaffRole
from app.shops.service import save_policy
from app.web.people import people_of


def _set_up(session: Session, shop: Shop) -> None:
    """Stripe connected and writes on: the app opens on the day's page, not the setup."""
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


def _figure(page: str, name: str) -> str:
    found = re.search(rf'data-figure="{name}"><dt>[^<]*</dt><dd>([^<]*)</dd>', page)
    assert found is not None, name
    return found.group(1).strip()


@pytest.fixture
def shop(session: Session, settings: Settings) -> Shop:
    shop = a_shop(session, settings, "linen")
    _set_up(session, shop)
    return shop


def test_the_day_says_what_waits_for_someone_with_its_money_and_how_the_week_went(
    client: FlaskClient, session: Session, shop: Shop
) -> None:
    maya = a_customer(session, shop)
    waiting = a_case(session, shop, "Torn apron", customer=maya)
    a_proposal(session, shop, waiting, amount=4800)
    handed = a_case(session, shop, "Wrong size", status=CaseStatus.NEEDS_ATTENTION)
    handed.owner = APPROVER  # handed to a member of staff: named, not numbered
    session.scalars(
        select(StaffMember).where(StaffMember.shop_id == shop.id, StaffMember.user_id == APPROVER)
    ).one().name = "Jo Lee"
    unclear = a_case(session, shop, "Refund sent, no answer yet", status=CaseStatus.EXECUTING)
    an_action(session, shop, unclear, a_proposal(session, shop, unclear, amount=2000), "unknown")
    failed = a_case(session, shop, "Refund failed", status=CaseStatus.NEEDS_ATTENTION)
    failed.owner = "jo@linen.example"
    an_action(session, shop, failed, a_proposal(session, shop, failed, amount=1500), "failed")
    done = a_case(session, shop, "Refunded", status=CaseStatus.RESOLVED)
    refund = an_action(
        session, shop, done, a_proposal(session, shop, done, amount=3000), "succeeded"
    )
    refund.updated_at = refund.created_at + timedelta(seconds=90)
    session.commit()

    page = text_of(open_page(client, shop, VIEWER, "/app"))

    assert _figure(page, "awaiting") == "1 · $48.00"
    assert _figure(page, "attention") == "2"
    assert _figure(page, "unclear") == "1"
    assert _figure(page, "at-risk") == "$20.00"
    assert _figure(page, "failed") == "1"
    assert _figure(page, "resolved") == "1"
    # Each list names the case by the number its customer sees, and links it.
    assert waiting.reference in page and "Torn apron" in page and "jo@linen.example" in page
    assert "<td>Jo Lee</td>" in page and f"<td>{APPROVER}</td>" not in page
    # The week drawn: the refund Stripe confirmed today, as an image whose label reads it.
    assert re.search(
        r'role="img" aria-label="Refunds the provider confirmed per day \(USD\)\.[^"]*\$30\.00',
        page,
    )
    assert _figure(page, "to-confirmation") != "—"


def test_a_quiet_day_says_so(client: FlaskClient, shop: Shop) -> None:
    page = text_of(open_page(client, shop, VIEWER, "/app"))

    assert "Nothing waits for anyone." in page
    assert _figure(page, "awaiting") == "0 · nothing"


def test_a_case_is_found_by_its_number_its_order_its_customer_and_its_subject(
    client: FlaskClient, session: Session, shop: Shop, settings: Settings
) -> None:
    maya = a_customer(session, shop, order="#1001")
    aprons = a_case(session, shop, "Torn apron", customer=maya)
    a_case(session, shop, "Late parcel")
    other = a_shop(session, settings, "other")
    theirs = a_case(session, other, "Torn apron", customer=a_customer(session, other))
    session.commit()

    def found(**query: str) -> set[str]:
        page = text_of(open_page(client, shop, VIEWER, "/app/cases", **query))
        return set(re.findall(r'<tr data-case="([0-9a-f-]+)"', page))

    assert found(q=aprons.reference) == {str(aprons.id)}
    assert found(q=aprons.reference.lower().removeprefix("c-")[:5]) == {str(aprons.id)}
    assert found(q="#1001") == found(q="1001") == {str(aprons.id)}
    assert found(q="MAYA@example") == found(q="maya") == {str(aprons.id)}
    assert found(q="apron") == {str(aprons.id)}
    # Another shop's case with the same words and number is never found here.
    assert found(q=theirs.reference) == set()
    assert found(q="100%") == set()


def test_the_search_narrows_by_status_owner_and_day_opened(session: Session, shop: Shop) -> None:
    now = utcnow()
    old = a_case(session, shop, "Old one", status=CaseStatus.RESOLVED)
    old.created_at = now - timedelta(days=40)
    jos = a_case(session, shop, "Jo's", status=CaseStatus.NEEDS_ATTENTION)
    jos.owner = "jo@linen.example"
    fresh = a_case(session, shop, "Fresh")
    session.commit()

    def ids(search: CaseSearch) -> set[str]:
        return {row.case.subject for row in case_queue(session, shop.id, search=search).rows}

    assert ids(CaseSearch(status=CaseStatus.RESOLVED)) == {old.subject}
    assert ids(CaseSearch(owner="jo@linen.example")) == {jos.subject}
    today = now.astimezone(UTC).date()
    assert ids(CaseSearch(opened_from=today - timedelta(days=1))) == {jos.subject, fresh.subject}
    assert ids(CaseSearch(opened_to=today - timedelta(days=30))) == {old.subject}
    queue = case_queue(session, shop.id, search=CaseSearch(owner="jo@linen.example"))
    assert (queue.matching, queue.owners) == (1, ["jo@linen.example"])


def test_the_queue_comes_a_page_at_a_time_newest_first(
    client: FlaskClient, session: Session, shop: Shop
) -> None:
    start = datetime(2026, 11, 1, tzinfo=UTC)
    cases = []
    for n in range(QUEUE_LENGTH + 7):
        case = a_case(session, shop, f"Case {n}")
        case.updated_at = start + timedelta(minutes=n)
        cases.append(case)
    session.commit()
    newest_first = [str(case.id) for case in reversed(cases)]

    first = open_page(client, shop, VIEWER, "/app/cases").get_data(as_text=True)
    second = open_page(client, shop, VIEWER, "/app/cases", page="2").get_data(as_text=True)

    assert re.findall(r'<tr data-case="([0-9a-f-]+)"', first) == newest_first[:QUEUE_LENGTH]
    assert re.findall(r'<tr data-case="([0-9a-f-]+)"', second) == newest_first[QUEUE_LENGTH:]
    assert 'rel="next"' in first and 'rel="prev"' not in first
    assert 'rel="prev"' in second and 'rel="next"' not in second
    assert "page 2 of 2" in second


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"from": "2026-02-30"}, "from"),
        ({"to": "yesterday"}, "to"),
        ({"status": "closed"}, "status"),
        ({"page": "0"}, "page"),
        ({"page": "two"}, "page"),
    ],
)
def test_a_wrong_search_is_refused_naming_its_field(
    client: FlaskClient, shop: Shop, query: dict[str, str], field: str
) -> None:
    answer = open_page(client, shop, VIEWER, "/app/cases", **query)

    assert answer.status_code == 400
    assert answer.get_json()["error"]["field"] == field


def test_every_case_shows_its_number(session: Session, shop: Shop) -> None:
    case: Case = a_case(session, shop, "Torn apron")

    assert re.fullmatch(r"C-[0-9A-F]{8}", case.reference)
    assert case.reference == "C-" + case.id.hex[:8].upper()


def test_the_day_reads_the_same_on_sqlite_as_the_demo_runs_it(tmp_path: Path) -> None:
    """The demo's database works the days and the medians out in Python: same figures."""
    engine = create_engine(f"sqlite:///{tmp_path / 'today.db'}")
    Base.metadata.create_all(engine)
    now = utcnow()
    with Session(engine) as session:
        shop = Shop(domain="quiet.myshopify.com", name="Quiet")
        session.add(shop)
        session.flush()
        session.add(StaffMember(shop_id=shop.id, user_id=OWNER, role=StaffRole.OWNER))
        done = a_case(session, shop, "Refunded", status=CaseStatus.RESOLVED)
        refund = an_action(
            session, shop, done, a_proposal(session, shop, done, amount=3000), "succeeded"
        )
        refund.updated_at = refund.created_at + timedelta(seconds=90)
        session.commit()

        cap = CapRule(Money(10000, "usd"), timedelta(days=30))
        day = today(session, shop.id, PolicyRules(per_customer_cap=cap), now)

    assert day.resolved_this_week == 1
    assert day.customer_cap is not None
    assert day.customer_cap.customers == [("cus_Maya", Money(3000, "usd"))]
    assert day.days[-1].refunded == {"usd": 3000}
    assert day.to_confirmation == timedelta(seconds=90)
    assert day.to_approval is not None


def test_a_viewer_is_told_why_they_cannot_decide_and_who_can(
    client: FlaskClient, session: Session, shop: Shop
) -> None:
    case = a_case(session, shop, "Torn apron", customer=a_customer(session, shop))
    a_proposal(session, shop, case)
    session.commit()

    as_viewer = text_of(open_page(client, shop, VIEWER, f"/app/cases/{case.id}"))
    as_owner = text_of(open_page(client, shop, OWNER, f"/app/cases/{case.id}"))

    assert "You are viewer here: only an approver or an owner can approve or reject it." in (
        as_viewer
    )
    # The owner first, then the approvers; nobody is left to guess.
    assert f"Who can: {OWNER}, {APPROVER}." in as_viewer
    assert "You are owner here" not in as_owner and 'class="approve"' in as_owner


def test_a_reply_kept_with_the_message_it_answers_reads_below_it(
    client: FlaskClient, session: Session, shop: Shop
) -> None:
    now = utcnow()
    shopper = system_actor("shopper", Surface.STOREFRONT)
    conversation = start_conversation(
        session,
        shop_id=shop.id,
        channel=Channel.STOREFRONT,
        channel_ref="visitor-1",
        actor=shopper,
        now=now,
    )
    # Twenty exchanges, each message and its reply kept in one moment: ids decide nothing.
    for n in range(20):
        receive_message(
            session, conversation=conversation, body=f"question {n}", actor=shopper, now=now
        )
        add_reply(
            session,
            conversation=conversation,
            body=f"answer {n}",
            sentence=None,
            actor=DRAFTER,
            now=now,
        )
    session.commit()

    bodies = [message.body for message in messages_of(session, conversation)]

    assert bodies == [text for n in range(20) for text in (f"question {n}", f"answer {n}")]


def test_people_are_named_not_numbered(client: FlaskClient, session: Session, shop: Shop) -> None:
    owner = session.scalars(
        select(StaffMember).where(StaffMember.shop_id == shop.id, StaffMember.user_id == OWNER)
    ).one()
    owner.name = "Ana Ruiz"
    case = a_case(session, shop, "Torn apron", customer=a_customer(session, shop))
    drafted = a_proposal(session, shop, case)
    drafted.proposed_by = DRAFTER.ref
    paid = a_proposal(session, shop, case)
    session.add(
        Approval(
            shop_id=shop.id,
            proposal_id=paid.id,
            digest=paid.digest,
            approver=OWNER,
            expires_at=utcnow() + timedelta(hours=1),
        )
    )
    session.commit()

    page = text_of(open_page(client, shop, VIEWER, f"/app/cases/{case.id}"))

    assert "Approved by Ana Ruiz on" in page and f"Approved by {OWNER} " not in page
    assert "proposed by Caseward's rules (drafter)" in page
    assert "Who can: Ana Ruiz, 1002." in page
    # The case's history says who opened it, and where, in words.
    assert "Ana Ruiz via the Shopify admin" in page and "via shopify_admin" not in page
    assert "The case was opened by Ana Ruiz on" in page and f"Case {case.reference}" in page


def test_the_audit_log_reads_in_words_with_the_record_one_click_away(
    client: FlaskClient, session: Session, shop: Shop
) -> None:
    owner = session.scalars(
        select(StaffMember).where(StaffMember.shop_id == shop.id, StaffMember.user_id == OWNER)
    ).one()
    owner.name = "Ana Ruiz"
    case = a_case(session, shop, "Torn apron")
    session.commit()

    page = text_of(open_page(client, shop, OWNER, "/app/audit"))

    row = re.search(
        r'<tr data-seq="\d+">((?:(?!</tr>).)*Case opened(?:(?!</tr>).)*)</tr>', page, re.S
    )
    assert row is not None, "the case's opening is in the log"
    opened = row.group(1)
    assert "Ana Ruiz via the Shopify admin" in opened
    assert f">{case.reference}</a>" in opened
    # The stored record, whole, behind a summary rather than across the page.
    assert '<details class="raw"><summary>The record as kept</summary>' in opened
    assert '"kind": "case.opened"' in opened


def test_the_customers_nearest_the_per_customer_cap_are_drawn_against_it(
    client: FlaskClient, session: Session, shop: Shop
) -> None:
    maya = a_customer(session, shop)
    for subject, amount, status in (
        ("Torn apron", 4800, "succeeded"),
        ("Second apron", 3000, "submitting"),  # on its way counts too, as the guard counts it
        ("Refused refund", 9900, "failed"),  # moved nothing: not counted
    ):
        case = a_case(session, shop, subject, customer=maya, status=CaseStatus.RESOLVED)
        an_action(session, shop, case, a_proposal(session, shop, case, amount=amount), status)
    other = a_case(session, shop, "Another customer's credit", status=CaseStatus.RESOLVED)
    credit = a_proposal(session, shop, other, amount=1200)
    credit.customer_ref = "cus_Unknown"
    an_action(session, shop, other, credit, "succeeded")
    save_policy(
        session,
        shop=shop,
        actor=staff(OWNER, Surface.SHOPIFY_ADMIN),
        rules={"per_customer_cap": {"amount": 10000, "currency": "usd", "period_seconds": 2592000}},
        now=utcnow(),
    )
    session.commit()

    page = text_of(open_page(client, shop, VIEWER, "/app"))

    # Most spent first, by name where Caseward knows one, the cap drawn across.
    label = re.search(
        r'role="img" aria-label="(The customers nearest the per-customer cap[^"]*)"', page
    )
    assert label is not None
    assert label.group(1) == (
        "The customers nearest the per-customer cap (30 days). "
        "the cap: $100.00; Maya: $78.00; cus_Unknown: $12.00"
    )
    assert 'class="limit"' in page


def test_caseward_the_providers_and_the_policy_are_named_not_coded(
    session: Session, shop: Shop
) -> None:
    people = people_of(
        session,
        shop.id,
        drafter="Claude (drafter)",
        customer="the customer",
        policy="the shop's policy (version %(version)s)",
    )

    assert people.of(system_actor("provider:stripe", Surface.PROVIDER).ref) == "Stripe"
    assert people.of(system_actor("gorgias", Surface.HELPDESK).ref) == "Gorgias"
    assert people.of(DRAFTER.ref) == "Claude (drafter)"
    assert people.of(system_actor("policy:v3", Surface.WORKER).ref) == (
        "the shop's policy (version 3)"
    )
    assert people.of("customer:cus_Maya") == "the customer"
