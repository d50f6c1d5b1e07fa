"""Refused requests about money or access stay on the record.

A refusal rolls the request's transaction back (nothing half-written), which would
also erase any audit event written inside it. So the refusal is recorded after the
rollback, in a transaction of its own: who tried, what (method, path, the proposal
or action named), and why (the error's code and its message in English, whatever
language the caller was answered in, so the trail reads the same to everyone).
Refusals before a shop is known (a token that names no installed shop) have no chain
to go into and are only rate-limited.
"""

from __future__ import annotations

import uuid

from flask import current_app, g, request
from sqlalchemy import select
from sqlalchemy.orm import Session

from app import audit
from app.cases.proposals import Proposal
from app.db import Database
from app.errors import CasewardError
from app.execution.models import Action

# 401 unauthenticated, 403 not allowed, 409 a state that no longer allows it.
RECORDED_STATUSES = frozenset({401, 403, 409})


def record_refusal(error: CasewardError, status: int) -> None:
    """Append a ``request.refused`` event to the shop's chain, outside the request's
    (rolled back) transaction, for ``error`` answered with ``status``. Call only after
    that rollback."""
    shop_id: uuid.UUID | None = g.get("refused_shop_id") or (g.shop.id if "shop" in g else None)
    if shop_id is None or "actor" not in g or status not in RECORDED_STATUSES:
        return
    named = {k: str(v) for k, v in (request.view_args or {}).items() if k.endswith("_id")}
    data: dict[str, object] = {
        "status": status,
        "code": error.code,
        "message": error.message,
        "method": request.method,
        "path": request.path,
        **named,
    }
    if error.field is not None:
        data["field"] = error.field
    with Database.state(current_app).session_factory() as session, session.begin():
        audit.record(
            session,
            shop_id=shop_id,
            kind="request.refused",
            actor=g.actor,
            case_id=_case_named(session, shop_id, named),
            data=data,
        )


def _case_named(session: Session, shop_id: uuid.UUID, named: dict[str, str]) -> uuid.UUID | None:
    """The case the request was about, so the refusal shows in that case's trail."""
    if "case_id" in named:
        return uuid.UUID(named["case_id"])
    for key, model in (("proposal_id", Proposal), ("action_id", Action)):
        if key in named:
            return session.scalar(
                select(model.case_id).where(
                    model.id == uuid.UUID(named[key]), model.shop_id == shop_id
                )
            )
    return None
