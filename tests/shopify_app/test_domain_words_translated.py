"""The case page says the guard's checks through the message catalogue, in the admin's locale.

The guard keeps each check's reason as a catalogue message and its values (so do the
executor, for why an action stopped, and the approvals, for why one was voided); the page
says it with the admin's catalogue and formats its money as the admin's locale writes money. A
pseudo-translation proves it: a catalogue that wraps every message in ⟦…⟧, installed for
German, shows each reason wrapped and its amounts the German way. A verdict stored before
reasons were kept as sentences has only its English, and the page shows that as stored.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from admin_pages_support import APPROVER, OWNER, VIEWER, a_shop, open_page, text_of
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import Translations
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy.orm import Session

from app.actors import WORKER, Surface, staff
from app.approvals.service import reject_proposal
from app.cases.digest import digest_of
from app.cases.models import Case, CaseStatus, Customer, Order
from app.cases.proposals import Approval, Proposal, ProposalStatus
from app.cases.service import open_case
from app.clock import utcnow
from app.execution.models import Action, ActionStatus
from app.execution.status import stop_action
from app.guard import (
    CapRule,
    IdentityLevel,
    PolicyRules,
    ProposedAction,
    ShopSwitches,
    Verdict,
    evaluate,
)
from app.money import Money
from app.settings import Settings
from app.shops.models import Shop
from app.web import admin_text
from app.words import Sentence, said
from integrations.provider import ActionKind, PaymentFacts

ROOT = Path(__file__).resolve().parents[2]
ENGLISH = ROOT / "app/translations/en/LC_MESSAGES/messages.po"
# A locale Babel knows, whose money differs from English: the pseudo-catalogue stands in
# for its translation.
PSEUDO = "de"
PAYMENT = "pi_3Apron"
CUSTOMER = "cus_Maya"
# A reason as verdicts were stored before sentences were kept: English only.
STORED_ENGLISH = "The payment was captured in full on the day it was made."


def _pseudo_catalogue(directory: Path) -> Path:
    """The English catalogue with every message wrapped in ⟦…⟧, compiled for ``PSEUDO``."""
    with ENGLISH.open("rb") as po:
        catalogue = read_po(po, locale=PSEUDO)
    for message in catalogue:
        if not message.id:
            continue  # the header
        if isinstance(message.id, tuple):
            message.string = tuple(f"⟦{form}⟧" for form in message.id)
        else:
            message.string = f"⟦{message.id}⟧"
    folder = directory / PSEUDO / "LC_MESSAGES"
    folder.mkdir(parents=True)
    with (folder / "messages.mo").open("wb") as mo:
        write_mo(mo, catalogue)
    return directory


def _forget_loaded_catalogues(app: Flask) -> None:
    # Flask-Babel keeps loaded catalogues per locale for the whole process, whichever
    # app loaded them: neither this test nor the next may read another's.
    with app.app_context():
        admin_text.babel.domain_instance.cache.clear()


@pytest.fixture
def translations_dir(tmp_path: Path) -> Path:
    return _pseudo_catalogue(tmp_path / "translations")


@pytest.fixture
def app(app: Flask, translations_dir: Path) -> Iterator[Flask]:
    app.config["BABEL_TRANSLATION_DIRECTORIES"] = str(translations_dir)
    admin_text.init_app(app)  # Flask-Babel reads its directories when it is installed
    _forget_loaded_catalogues(app)
    yield app
    _forget_loaded_catalogues(app)


def _pseudo_translations(translations_dir: Path) -> Translations:
    return Translations.load(str(translations_dir), [PSEUDO])


def a_refund_case(session: Session, settings: Settings) -> Case:
    """Maya's torn apron: a $96.00 order paid with one payment, a case about it."""
    shop = a_shop(session, settings, "linen")
    customer = Customer(
        shop_id=shop.id, email="maya@example.com", name="Maya", stripe_customer_id=CUSTOMER
    )
    session.add(customer)
    session.flush()
    session.add(
        Order(
            shop_id=shop.id,
            customer_id=customer.id,
            name="#1001",
            currency="usd",
            total=9600,
            payment_provider="stripe",
            payment_id=PAYMENT,
            lines=[{"id": "apron", "title": "Linen apron", "quantity": 2, "paid": 9600}],
        )
    )
    case = open_case(
        session,
        shop=shop,
        actor=staff(OWNER, Surface.SHOPIFY_ADMIN),
        customer_id=customer.id,
        subject="Torn apron",
        request_text="The apron arrived torn. I'd like my money back.",
        identity_level="strong",
        now=utcnow(),
    )
    case.status = CaseStatus.AWAITING_APPROVAL
    session.flush()
    return case


def a_checked_refund() -> Verdict:
    """The guard's verdict on refunding $48.00 of the $96.00 payment, under rules that give
    most checks an amount to say."""
    now = utcnow()
    proposal = ProposedAction(
        kind=ActionKind.REFUND,
        target=PAYMENT,
        amount=Money(4800, "usd"),
        identity_level=IdentityLevel.STRONG,
        proposed_by=APPROVER,
        customer_ref=CUSTOMER,
        case_customer=CUSTOMER,
        params={"reason": "damaged"},
    )
    facts = PaymentFacts(
        id=PAYMENT,
        exists=True,
        currency="usd",
        amount=9600,
        captured=9600,
        paid=True,
        disputed=False,
        customer_id=CUSTOMER,
        created=now - timedelta(days=3),
        refunds=(),
    )
    policy = PolicyRules(
        auto_approve_ceiling={"usd": 2000},
        per_customer_cap=CapRule(Money(10000, "usd"), timedelta(days=7)),
    )
    return evaluate(
        proposal,
        facts,
        policy=policy,
        switches=ShopSwitches(writes_enabled=True),
        in_flight=(),
        history=(),
        now=now,
    )


def a_proposal(session: Session, case: Case, verdict: dict[str, Any]) -> Proposal:
    proposal = Proposal(
        id=uuid.uuid4(),
        shop_id=case.shop_id,
        case_id=case.id,
        kind="refund",
        provider="stripe",
        target=PAYMENT,
        customer_ref=CUSTOMER,
        amount=4800,
        currency="usd",
        line_items=[],
        params={"reason": "damaged"},
        proposed_by=APPROVER,
        status=ProposalStatus.AWAITING_APPROVAL,
        verdict=verdict,
        approvals_required=1,
        policy_version=1,
    )
    proposal.digest = digest_of(proposal, 1)
    session.add(proposal)
    session.commit()
    return proposal


def reasons_on(page: str) -> list[str]:
    """The reason column of the page's checks table, row by row."""
    table = re.search(r'<table class="checks">(.*?)</table>', page, re.DOTALL)
    assert table, "the page shows no checks table"
    rows = re.findall(r"<tr>(.*?)</tr>", table[1].split("<tbody>", 1)[1], re.DOTALL)
    return [re.findall(r"<td>(.*?)</td>", row, re.DOTALL)[-1].strip() for row in rows]


def shop_of(session: Session, case: Case) -> Shop:
    shop = session.get(Shop, case.shop_id)
    assert shop is not None
    return shop


def test_every_check_is_said_in_the_admins_catalogue_with_its_money_in_their_locale(
    client: FlaskClient, session: Session, settings: Settings, translations_dir: Path
) -> None:
    case = a_refund_case(session, settings)
    verdict = a_checked_refund()
    a_proposal(session, case, verdict.to_dict())

    page = text_of(
        open_page(client, shop_of(session, case), VIEWER, f"/app/cases/{case.id}", locale=PSEUDO)
    )

    pseudo = _pseudo_translations(translations_dir)
    shown = reasons_on(page)
    assert shown == [check.said.in_locale(pseudo, PSEUDO) for check in verdict.checks]
    assert all(reason.startswith("⟦") and reason.endswith("⟧") for reason in shown), shown
    remaining = shown[[check.name for check in verdict.checks].index("refundable_remaining")]
    assert "⟦Refund of %(amount)s" not in remaining  # the values are filled in
    assert "48,00\u00a0$" in remaining and "96,00\u00a0$" in remaining
    assert not any("$48.00" in reason or "$96.00" in reason for reason in shown)
    approval = verdict.approval_said.in_locale(pseudo, PSEUDO)
    assert approval.startswith("⟦One person must approve: 48,00\u00a0$") and approval in page


def test_a_verdict_stored_before_sentences_shows_its_english_as_stored(
    client: FlaskClient, session: Session, settings: Settings
) -> None:
    case = a_refund_case(session, settings)
    a_proposal(
        session,
        case,
        {
            "outcome": "needs_approval",
            "approvals_required": 1,
            "approval_reason": "One person approves every refund.",
            "policy_version": 1,
            "checks": [{"name": "captured", "passed": True, "reason": STORED_ENGLISH, "facts": {}}],
        },
    )

    page = text_of(
        open_page(client, shop_of(session, case), VIEWER, f"/app/cases/{case.id}", locale=PSEUDO)
    )

    assert reasons_on(page) == [STORED_ENGLISH]
    assert "One person approves every refund." in page
    assert "⟦Payment captured⟧" in page  # the page around it is in the admin's catalogue


def test_a_stored_verdict_without_sentences_reads_as_its_english(translations_dir: Path) -> None:
    stored = {
        "outcome": "blocked",
        "approvals_required": 1,
        "approval_reason": "Nobody can approve this while 1 of 1 checks fail.",
        "policy_version": 3,
        "checks": [
            {"name": "captured", "passed": False, "reason": STORED_ENGLISH, "facts": {"a": 1}}
        ],
    }

    verdict = Verdict.from_dict(stored)

    pseudo = _pseudo_translations(translations_dir)
    assert verdict.checks[0].reason == STORED_ENGLISH
    assert verdict.checks[0].said.in_locale(pseudo, PSEUDO) == STORED_ENGLISH
    assert verdict.approval_reason == stored["approval_reason"]
    assert verdict.approval_said.in_locale(pseudo, PSEUDO) == stored["approval_reason"]
    again = verdict.to_dict()
    assert again["checks"][0]["reason"] == STORED_ENGLISH
    assert Sentence.from_dict(again["checks"][0]["said"]) == Sentence(STORED_ENGLISH)


def test_why_an_action_stopped_and_an_approval_was_voided_are_said_in_the_admins_catalogue(
    client: FlaskClient, session: Session, settings: Settings
) -> None:
    case = a_refund_case(session, settings)
    proposal = a_proposal(session, case, a_checked_refund().to_dict())
    now = utcnow()
    session.add(
        Approval(
            shop_id=case.shop_id,
            proposal_id=proposal.id,
            digest=proposal.digest,
            approver=APPROVER,
            created_at=now,
            expires_at=now + timedelta(hours=1),
        )
    )
    action = Action(
        id=uuid.uuid4(),
        shop_id=case.shop_id,
        case_id=case.id,
        proposal_id=proposal.id,
        proposal_revision=proposal.revision,
        digest=proposal.digest,
        kind="refund",
        provider="stripe",
        target=PAYMENT,
        customer_ref=CUSTOMER,
        amount=4800,
        currency="usd",
        money_ref=PAYMENT,
        idempotency_key="caseward-action-test",
        status=ActionStatus.QUEUED,
        approved_by=[APPROVER],
        approval_expires_at=now + timedelta(hours=1),
        created_at=now,
        updated_at=now,
    )
    session.add(action)
    session.flush()
    stop_action(
        session,
        action,
        ActionStatus.HALTED,
        said("the shop's kill switch is on"),
        actor=WORKER,
        now=now,
    )
    reject_proposal(
        session,
        shop=shop_of(session, case),
        proposal_id=proposal.id,
        actor=staff(OWNER, Surface.SHOPIFY_ADMIN),
        reason="Not this one.",
        now=now,
    )
    session.commit()

    page = text_of(
        open_page(client, shop_of(session, case), VIEWER, f"/app/cases/{case.id}", locale=PSEUDO)
    )

    # On the action, in its timeline and beside the voided approval: the admin's words.
    assert page.count("⟦the shop's kill switch is on⟧") >= 2, page
    assert "⟦the proposal was rejected⟧" in page
    assert "the shop's kill switch is on" not in page.replace("⟦the shop's kill switch is on⟧", "")
    # The record keeps the English.
    assert (action.status_reason, action.status_sentence) == (
        "the shop's kill switch is on",
        said("the shop's kill switch is on").to_dict(),
    )
