"""The embedded admin's case pages, as staff meet them inside the Shopify admin.

The queue counts and filters the shop's cases; a case's page shows its file (identity,
orders and payments, the request, every check, what is in flight, what is missing) and,
to someone who may decide, the exact action in words with the digest their approval is
bound to. The page's approval goes through the JSON API exactly as its script sends it;
whoever may not approve gets no button and a 403 all the same, and another shop's staff
find nothing at all. Money and dates follow the admin's language.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
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
    api,
    open_page,
    text_of,
)
from flask.testing import FlaskClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app import audit
from app.actors import WORKER
from app.audit import AuditEvent
from app.cases.digest import digest_of
from app.cases.models import Case, CaseStatus
from app.cases.proposals import Proposal, ProposalStatus
from app.clock import utcnow
from app.connections.models import Connection
from app.execution.models import ActionAttempt, ActionStatus
from app.settings import Settings
from app.shops.models import Shop
from app.words import WORDS

ROOT = Path(__file__).resolve().parents[2]
REFUND_IN_WORDS = (
    "Refund $48.00 of order #1001, Stripe payment pi_3Apron of customer cus_Maya, "
    "to the original payment method."
)


@dataclass(frozen=True)
class Linen:
    shop: Shop
    case_id: uuid.UUID
    proposal_id: uuid.UUID
    digest: str


@pytest.fixture
def linen(session: Session, settings: Settings) -> Linen:
    shop = a_shop(session, settings, "linen")
    case = a_case(
        session,
        shop,
        "Torn apron",
        status=CaseStatus.AWAITING_APPROVAL,
        customer=a_customer(session, shop),
    )
    proposal = a_proposal(session, shop, case)
    session.commit()
    return Linen(shop, case.id, proposal.id, proposal.digest)


def counts_of(page: str) -> dict[str, str]:
    return dict(re.findall(r'<s-badge data-count="(\w+)"[^>]*>(\d+)</s-badge>', page))


def approve_form(page: str) -> dict[str, str] | None:
    """What the page's script sends on approve: the form's URL and digest."""
    form = re.search(r'<form class="approve" data-url="([^"]+)" data-digest="([^"]+)"', page)
    return {"url": form[1], "digest": form[2]} if form else None


# ------------------------------------------------------------------ the queue


def test_the_queue_counts_each_filter_in_one_read_and_lists_what_a_filter_selects(
    client: FlaskClient, session: Session, settings: Settings, linen: Linen
) -> None:
    shop = linen.shop
    unknown = a_case(session, shop, "Refund sent, no answer")
    an_action(session, shop, unknown, a_proposal(session, shop, unknown), ActionStatus.UNKNOWN)
    failed = a_case(session, shop, "Refund failed", status=CaseStatus.NEEDS_ATTENTION)
    an_action(session, shop, failed, a_proposal(session, shop, failed), ActionStatus.FAILED)
    settled = a_case(session, shop, "Failed once, then refunded", status=CaseStatus.RESOLVED)
    an_action(session, shop, settled, a_proposal(session, shop, settled), ActionStatus.FAILED)
    a_case(session, shop, "Says they ordered #1002", identity="claim")
    bank = a_case(session, shop, "Refund needs bank details")
    an_action(session, shop, bank, a_proposal(session, shop, bank), ActionStatus.REQUIRES_ACTION)
    cotton = a_shop(session, settings, "cotton")
    a_case(session, cotton, "Cotton's own case", identity="claim")
    session.commit()

    everything = text_of(open_page(client, shop, VIEWER, "/app/cases"))
    waiting = text_of(open_page(client, shop, VIEWER, "/app/cases", filter="waiting_on_customer"))

    assert counts_of(everything) == {
        "all": "6",
        "needs_approval": "1",
        "unknown_outcome": "1",
        "failed": "1",  # the resolved case's old failure no longer waits for anyone
        "waiting_on_customer": "2",
    }
    assert "Cotton's own case" not in everything
    assert "Says they ordered #1002" in waiting and "Refund needs bank details" in waiting
    assert "Torn apron" not in waiting and "Refund failed" not in waiting


def test_the_apps_home_shows_what_waits_for_someone_once_the_shop_is_set_up(
    client: FlaskClient, session: Session, settings: Settings, linen: Linen
) -> None:
    session.add(
        Connection(
            shop_id=linen.shop.id,
            provider="stripe",
            livemode=False,
            encrypted_secret=b"unused",
            key_hint="rk_test_...inen",
            created_by=OWNER,
        )
    )
    session.commit()

    home = text_of(open_page(client, linen.shop, VIEWER, "/app"))
    queue = text_of(open_page(client, linen.shop, VIEWER, "/app/cases"))

    # The proposal awaiting approval, listed with its money, and the queue's counts.
    assert "Awaiting approval" in home and "Torn apron" in home
    assert "Nothing waits for anyone." not in home
    assert counts_of(queue) == {
        "all": "1",
        "needs_approval": "1",
        "unknown_outcome": "0",
        "failed": "0",
        "waiting_on_customer": "0",
    }


def test_an_unknown_filter_is_refused_naming_the_field(client: FlaskClient, linen: Linen) -> None:
    answer = open_page(client, linen.shop, VIEWER, "/app/cases", filter="everything")

    assert answer.status_code == 400
    assert answer.get_json()["error"]["field"] == "filter"


# ------------------------------------------------------------------ a case file


def test_a_case_file_shows_identity_orders_request_checks_policy_and_history(
    client: FlaskClient, linen: Linen
) -> None:
    page = text_of(open_page(client, linen.shop, VIEWER, f"/app/cases/{linen.case_id}"))

    assert "strong</strong>: The customer signed in to the store" in page
    assert "How this level was established for this customer is not recorded" in page
    assert "Maya · maya@example.com" in page and "cus_Maya" in page
    assert "#1001" in page and "pi_3Apron" in page
    assert "1 \u00d7 Linen apron, $48.00 paid" in page
    assert "The apron arrived torn. I'd like my money back." in page
    assert REFUND_IN_WORDS in page
    assert "Payment captured" in page and "The payment was captured in full." in page
    assert "checked under policy version 1" in page
    assert "Every action needs a person's approval; the policy approves nothing itself." in page
    assert "Case opened" in page
    assert "Nothing on file is missing or contradicts anything else." in page


def test_missing_and_conflicting_facts_are_said_plainly(
    client: FlaskClient, session: Session, linen: Linen
) -> None:
    shop = linen.shop
    bare = a_case(session, shop, "Where is my refund?", identity="claim", request_text="")
    a_proposal(session, shop, bare, target="pi_3Unknown", status=ProposalStatus.BLOCKED)
    session.commit()

    page = text_of(open_page(client, shop, OWNER, f"/app/cases/{bare.id}"))

    assert "The customer is not identified (a claim only)" in page
    assert "The customer's request is empty." in page
    assert "No customer is linked to this case" in page
    assert "targets pi_3Unknown, which no order on file matches." in page
    assert "(no order on file matches it)" in page  # the words name no order either


def test_an_actions_timeline_shows_attempts_and_what_the_provider_reported(
    client: FlaskClient, session: Session, linen: Linen
) -> None:
    case = session.get(Case, linen.case_id)
    proposal = session.get(Proposal, linen.proposal_id)
    assert case is not None and proposal is not None
    action = an_action(session, linen.shop, case, proposal, ActionStatus.SUCCEEDED)
    action.provider_ref, action.attempts_made = "re_3Apron", 1
    session.add(
        ActionAttempt(
            action_id=action.id,
            number=1,
            purpose="submit",
            idempotency_key=action.idempotency_key,
            outcome="answered",
            provider_ref="re_3Apron",
            provider_status="succeeded",
            finished_at=utcnow(),
        )
    )
    audit.record(
        session,
        shop_id=linen.shop.id,
        kind="action.provider_status",
        actor=WORKER,
        case_id=case.id,
        action_id=action.id,
        data={"previous": "submitting", "status": "succeeded", "provider_ref": "re_3Apron"},
    )
    session.commit()

    page = text_of(open_page(client, linen.shop, VIEWER, f"/app/cases/{linen.case_id}"))
    timeline = page[page.index(f'data-action="{action.id}"') :]

    assert "Attempt 1 at the provider: sent" in timeline and "the provider answered" in timeline
    assert "the provider's status: succeeded" in timeline
    assert "provider reference re_3Apron" in timeline
    assert "Provider reported a status" in timeline
    assert "status being sent → succeeded" in timeline
    assert f"idempotency key {action.idempotency_key}" in timeline
    assert "No action of this case is on its way." in page  # succeeded is not in flight


# ------------------------------------------------------------------ deciding


def test_an_approver_approves_the_digest_the_page_shows_through_the_api(
    client: FlaskClient, session: Session, linen: Linen
) -> None:
    page = text_of(open_page(client, linen.shop, OWNER, f"/app/cases/{linen.case_id}"))
    form = approve_form(page)
    assert form is not None and form["digest"] == linen.digest
    assert REFUND_IN_WORDS in page

    answer = api(client, linen.shop, OWNER, "POST", form["url"], {"digest": form["digest"]})

    assert answer.status_code == 200, answer.get_json()
    assert answer.get_json()["action"]["status"] == "queued"
    approved = session.scalars(
        select(AuditEvent).where(
            AuditEvent.shop_id == linen.shop.id, AuditEvent.kind == "proposal.approved"
        )
    ).one()
    assert (approved.actor, approved.actor_surface) == (OWNER, "shopify_admin")
    assert approved.data["digest"] == linen.digest
    after = text_of(open_page(client, linen.shop, OWNER, f"/app/cases/{linen.case_id}"))
    assert approve_form(after) is None
    assert "Action queued" in after and "queued" in after


def test_an_approval_of_a_digest_that_changed_since_the_page_approves_nothing(
    client: FlaskClient, session: Session, linen: Linen
) -> None:
    form = approve_form(
        text_of(open_page(client, linen.shop, OWNER, f"/app/cases/{linen.case_id}"))
    )
    assert form is not None
    proposal = session.get(Proposal, linen.proposal_id)
    assert proposal is not None
    proposal.amount = 4700  # edited elsewhere after the page was read
    proposal.digest = digest_of(proposal, 1)
    session.commit()

    answer = api(client, linen.shop, OWNER, "POST", form["url"], {"digest": form["digest"]})

    assert answer.status_code == 409
    assert answer.get_json()["error"]["code"] == "stale_digest"
    session.refresh(proposal)
    assert proposal.status == ProposalStatus.AWAITING_APPROVAL


def test_a_viewer_sees_the_case_but_no_decision_and_the_api_refuses_them(
    client: FlaskClient, session: Session, linen: Linen
) -> None:
    page = text_of(open_page(client, linen.shop, VIEWER, f"/app/cases/{linen.case_id}"))
    assert REFUND_IN_WORDS in page
    assert approve_form(page) is None and 'class="reject"' not in page
    url = f"/api/proposals/{linen.proposal_id}/approve"

    answer = api(client, linen.shop, VIEWER, "POST", url, {"digest": linen.digest})

    assert answer.status_code == 403
    proposal = session.get(Proposal, linen.proposal_id)
    assert proposal is not None and proposal.status == ProposalStatus.AWAITING_APPROVAL


def test_an_approver_over_their_limit_is_told_why_instead_of_offered_a_button(
    client: FlaskClient, linen: Linen
) -> None:
    page = text_of(open_page(client, linen.shop, APPROVER, f"/app/cases/{linen.case_id}"))

    assert approve_form(page) is None
    assert "Your approval limit in USD is $0.00." in page
    assert 'class="reject"' in page  # rejecting needs no limit


def test_a_proposal_checked_under_an_older_policy_offers_no_approval(
    client: FlaskClient, linen: Linen
) -> None:
    saved = api(
        client, linen.shop, OWNER, "PUT", "/api/shop/policy", {"rules": {"max_percent_off": 40}}
    )
    assert saved.status_code == 200

    page = text_of(open_page(client, linen.shop, OWNER, f"/app/cases/{linen.case_id}"))

    assert approve_form(page) is None
    assert "checked under policy version 1 and the policy is now at version 2" in page


def test_a_rejection_from_the_page_is_recorded_with_its_reason(
    client: FlaskClient, session: Session, linen: Linen
) -> None:
    page = text_of(open_page(client, linen.shop, APPROVER, f"/app/cases/{linen.case_id}"))
    url = re.search(r'<form class="reject" data-url="([^"]+)"', page)
    assert url is not None

    answer = api(client, linen.shop, APPROVER, "POST", url[1], {"reason": "Already refunded"})

    assert answer.status_code == 200
    assert answer.get_json()["proposal"]["rejection_reason"] == "Already refunded"
    proposal = session.get(Proposal, linen.proposal_id)
    assert proposal is not None and proposal.status == ProposalStatus.REJECTED
    page = text_of(open_page(client, linen.shop, APPROVER, f"/app/cases/{linen.case_id}"))
    assert "Why it was rejected: Already refunded" in page
    # The audit chain, which no erasure reaches, records who rejected it, not their words.
    rejected = session.scalars(
        select(AuditEvent).where(AuditEvent.kind == "proposal.rejected")
    ).one()
    assert rejected.actor == APPROVER and "Already refunded" not in str(rejected.data)


def test_another_shops_staff_find_nothing_of_this_shop(
    client: FlaskClient, session: Session, settings: Settings, linen: Linen
) -> None:
    cotton = a_shop(session, settings, "cotton")

    page = open_page(client, cotton, OWNER, f"/app/cases/{linen.case_id}")
    missing = open_page(client, cotton, OWNER, f"/app/cases/{uuid.uuid4()}")
    queue = text_of(open_page(client, cotton, OWNER, "/app/cases"))
    read = api(client, cotton, OWNER, "GET", f"/api/cases/{linen.case_id}", None)
    approve = api(
        client,
        cotton,
        OWNER,
        "POST",
        f"/api/proposals/{linen.proposal_id}/approve",
        {"digest": linen.digest},
    )

    # Another shop's case reads exactly like a case that never was.
    assert page.status_code == missing.status_code == 404
    for answer in (page, missing):
        assert "There is no such case in this shop." in answer.get_data(as_text=True)
    assert "Torn apron" not in page.get_data(as_text=True)
    assert "Torn apron" not in queue and "No cases yet." in queue
    assert (read.status_code, approve.status_code) == (404, 404)
    proposal = session.get(Proposal, linen.proposal_id)
    assert proposal is not None and proposal.status == ProposalStatus.AWAITING_APPROVAL


# ------------------------------------------------------------------ the admin's language


def test_a_french_admin_reads_money_and_dates_the_french_way(
    client: FlaskClient, linen: Linen
) -> None:
    page = text_of(
        open_page(client, linen.shop, VIEWER, f"/app/cases/{linen.case_id}", locale="fr")
    )

    assert '<html lang="fr">' in page
    assert "48,00\u00a0$US" in page and "$48.00" not in page
    # Links to other pages keep the admin's language.
    assert re.search(r'href="/app/cases\?[^"]*locale=fr', page)


def test_a_yen_order_shows_no_decimals_in_any_language(
    client: FlaskClient, session: Session, linen: Linen
) -> None:
    customer = a_customer(
        session, linen.shop, currency="jpy", total=2400, order="#1002", payment="pi_3Teapot"
    )
    yen = a_case(session, linen.shop, "Broken teapot", customer=customer)
    session.commit()

    french = text_of(open_page(client, linen.shop, VIEWER, f"/app/cases/{yen.id}", locale="fr"))
    english = text_of(open_page(client, linen.shop, VIEWER, f"/app/cases/{yen.id}"))

    assert "2\u202f400\u00a0JPY" in french and "2\u202f400,00" not in french
    assert "¥2,400" in english and "¥2,400.00" not in english


@pytest.mark.parametrize(
    ("locale", "shown"),
    [("fr-CA", "48,00\u00a0$\u00a0US"), ("xx-NOPE", "$48.00"), ("<script>", "$48.00")],
)
def test_the_admins_locale_is_used_only_when_babel_knows_it(
    client: FlaskClient, linen: Linen, locale: str, shown: str
) -> None:
    page = text_of(
        open_page(client, linen.shop, VIEWER, f"/app/cases/{linen.case_id}", locale=locale)
    )

    assert shown in page


def test_every_audit_event_the_code_records_has_words() -> None:
    """The audit log and the case history show each event in words, never its code."""
    recorded = {
        kind
        for path in (ROOT / "app").rglob("*.py")
        for kind in re.findall(r'\bkind="([a-z_]+\.[a-z_]+)"', path.read_text())
    }

    assert len(recorded) > 30  # the pattern still finds them
    assert recorded - set(WORDS["event"]) == set()
