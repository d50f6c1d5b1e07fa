"""Reading and opening cases, always within one shop."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app import audit
from app.actors import Actor
from app.audit import AuditEvent
from app.cases.models import Case, Customer
from app.errors import InvalidInput, NotFound
from app.guard import IdentityLevel
from app.shops.models import Shop, StaffRole
from app.shops.service import require_role
from app.validation import LONG_TEXT, SHORT_TEXT, text
from app.words import said


def list_cases(session: Session, shop_id: uuid.UUID, status: str | None = None) -> list[Case]:
    query = select(Case).where(Case.shop_id == shop_id).order_by(Case.updated_at.desc())
    if status:
        query = query.where(Case.status == status)
    return list(session.scalars(query.limit(200)))


def get_case(session: Session, shop_id: uuid.UUID, case_id: uuid.UUID) -> Case:
    case = session.scalars(
        select(Case).where(Case.id == case_id, Case.shop_id == shop_id)
    ).one_or_none()
    if case is None:
        raise NotFound(said("case not found"))
    return case


def case_audit(session: Session, shop_id: uuid.UUID, case_id: uuid.UUID) -> list[AuditEvent]:
    get_case(session, shop_id, case_id)
    return list(
        session.scalars(
            select(AuditEvent)
            .where(AuditEvent.shop_id == shop_id, AuditEvent.case_id == case_id)
            .order_by(AuditEvent.seq)
        )
    )


def open_case(
    session: Session,
    *,
    shop: Shop,
    actor: Actor,
    customer_id: uuid.UUID | None,
    subject: str,
    request_text: str,
    identity_level: str,
    now: datetime,
) -> Case:
    require_role(session, shop.id, actor, StaffRole.CAN_PROPOSE, said("open cases"))
    # Within the columns: subject String(255); request_text is free text, line breaks kept.
    subject = str(text(subject, "subject", max_length=SHORT_TEXT, required=True))
    request_text = text(request_text, "request_text", max_length=LONG_TEXT, multiline=True) or ""
    try:
        level = IdentityLevel(identity_level)
    except ValueError:
        choices = ", ".join(level.value for level in IdentityLevel)
        raise InvalidInput(
            said("identity_level must be one of %(choices)s", choices=choices),
            field="identity_level",
        ) from None
    if customer_id is not None:
        customer = session.get(Customer, customer_id)
        if customer is None or customer.shop_id != shop.id:
            raise InvalidInput(said("no such customer in this shop"), field="customer_id")
    case = Case(
        shop_id=shop.id,
        customer_id=customer_id,
        subject=subject,
        request_text=request_text,
        identity_level=level.value,
        created_at=now,
        updated_at=now,
    )
    session.add(case)
    session.flush()
    audit.record(
        session,
        shop_id=shop.id,
        kind="case.opened",
        actor=actor,
        case_id=case.id,
        # Never the subject: the chain holds no customer's words (see app/privacy).
        data={"identity_level": level.value},
        now=now,
    )
    return case
