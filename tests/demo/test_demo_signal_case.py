"""The demo shows an abuse signal: Theo writes on the storefront chat that his order #1002
never arrived, though the carrier marked it delivered. The offline rules draft the refund of
his throw, its checks raise the signal, and the refund waits for a person, who reads why on
the operator page. A restart seeds nothing twice."""

from __future__ import annotations

import html
import re
import uuid
from datetime import timedelta
from typing import TYPE_CHECKING

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.actors import Surface, system_actor
from app.cases.models import Case
from app.cases.proposals import Proposal
from app.clock import utcnow
from app.crypto import secret_box
from app.db import Database
from app.demo import APPROVER, SIGNAL_SUBJECT, seed_linen_shop, seed_signal_case
from app.guard import Outcome, Verdict
from app.settings import Settings
from app.shops.models import Shop
from app.staff.tokens import issue_token

if TYPE_CHECKING:  # only the fixture's type: "conftest" is whichever folder's was loaded last
    from conftest import Account

CSRF_FIELD = re.compile(r'name="csrf_token" value="([^"]+)"')


def test_theos_never_arrived_refund_raises_a_signal_and_waits_for_a_person(
    app: Flask, client: FlaskClient, settings: Settings, account: Account
) -> None:
    with Database.state(app).session_factory() as session:
        seed_linen_shop(
            session,
            settings=settings,
            box=secret_box(settings),
            secret_key=account.secret_key,
            restricted_key=account.restricted_key,
            webhook_base_url=None,
        )
        session.commit()

        case_id = seed_signal_case(
            session, settings=settings, box=secret_box(settings), secret_key=account.secret_key
        )
        session.commit()

        assert case_id is not None
        verdict, proposal_status = _theos_verdict(session, case_id)
        token = _approvers_token(session)
        session.commit()
        # A restart finds the case and seeds nothing more.
        assert (
            seed_signal_case(
                session, settings=settings, box=secret_box(settings), secret_key=account.secret_key
            )
            is None
        )
        assert len(session.scalars(select(Case).where(Case.subject == SIGNAL_SUBJECT)).all()) == 1

    assert proposal_status == "awaiting_approval"
    assert verdict.outcome is Outcome.NEEDS_APPROVAL and verdict.failed == ()
    [raised] = verdict.signals
    assert raised.name == "delivered_but_not_received"
    assert re.fullmatch(
        r"The customer says an order never arrived, but the shipment of order #1002 was "
        r"marked delivered on \d{4}-\d{2}-\d{2}\.",
        raised.reason,
    )
    form = CSRF_FIELD.search(client.get("/operator/login").get_data(as_text=True))
    assert form is not None
    client.post("/operator/login", data={"token": token, "csrf_token": form.group(1)})
    page = html.unescape(client.get(f"/operator/cases/{case_id}").get_data(as_text=True))
    assert raised.reason in page


def _theos_verdict(session: Session, case_id: uuid.UUID) -> tuple[Verdict, str]:
    proposal = session.scalars(select(Proposal).where(Proposal.case_id == case_id)).one()
    return Verdict.from_dict(proposal.verdict), proposal.status


def _approvers_token(session: Session) -> str:
    shop = session.scalars(select(Shop)).one()
    return issue_token(
        session,
        shop=shop,
        user_id=APPROVER,
        issued_by=system_actor("demo", Surface.CONSOLE),
        lifetime=timedelta(hours=1),
        now=utcnow(),
        label="test sign-in",
        console=True,
    ).secret
