"""Staff and token handlers under ``/api``: parse, call the domain, commit. Nothing else.

Staff are managed by owners; anyone may issue and revoke their own tokens, an owner
anyone's in the shop. A token's secret appears once, in the answer that issues it.
"""

from __future__ import annotations

import uuid
from typing import Any

from flask import Response, g, jsonify

from app.clock import utcnow
from app.db import request_session
from app.errors import InvalidInput
from app.shops.models import StaffMember
from app.staff.members import add_member, list_members, remove_member, update_member
from app.staff.models import StaffToken
from app.staff.tokens import issue_token, lifetime_from_days, list_tokens, revoke_token
from app.web.api.parsing import json_body, text_field
from app.web.api.routes import bp
from app.web.auth import require_staff
from app.words import said


@bp.get("/staff")
@require_staff
def staff_index() -> Response:
    members = list_members(request_session(), shop=g.shop, actor=g.actor)
    return jsonify({"staff": [member_json(m) for m in members]})


@bp.post("/staff")
@require_staff
def staff_create() -> tuple[Response, int]:
    body = json_body()
    session = request_session()
    member = add_member(
        session,
        shop=g.shop,
        actor=g.actor,
        user_id=text_field(body, "user_id", required=True),
        role=text_field(body, "role", required=True),
        email=text_field(body, "email") or None,
        approval_limits=_limits(body) or {},
        now=utcnow(),
    )
    session.commit()
    return jsonify(member_json(member)), 201


@bp.put("/staff/<user_id>")
@require_staff
def staff_update(user_id: str) -> Response:
    body = json_body()
    session = request_session()
    member = update_member(
        session,
        shop=g.shop,
        actor=g.actor,
        user_id=user_id,
        role=text_field(body, "role") or None,
        approval_limits=_limits(body),
        now=utcnow(),
    )
    session.commit()
    return jsonify(member_json(member))


@bp.delete("/staff/<user_id>")
@require_staff
def staff_remove(user_id: str) -> Response:
    session = request_session()
    revoked = remove_member(session, shop=g.shop, actor=g.actor, user_id=user_id, now=utcnow())
    session.commit()
    return jsonify({"removed": user_id, "tokens_revoked": revoked})


@bp.post("/tokens")
@require_staff
def tokens_create() -> tuple[Response, int]:
    body = json_body()
    days = body.get("expires_in_days")
    session = request_session()
    issued = issue_token(
        session,
        shop=g.shop,
        user_id=text_field(body, "user_id") or g.actor.id,
        issued_by=g.actor,
        lifetime=lifetime_from_days(days),
        label=text_field(body, "label") or None,
        now=utcnow(),
    )
    session.commit()
    return jsonify({**token_json(issued.row), "token": issued.secret}), 201


@bp.get("/tokens")
@require_staff
def tokens_index() -> Response:
    tokens = list_tokens(request_session(), g.shop.id, g.actor)
    return jsonify({"tokens": [token_json(t) for t in tokens]})


@bp.delete("/tokens/<uuid:token_id>")
@require_staff
def tokens_revoke(token_id: uuid.UUID) -> Response:
    session = request_session()
    token = revoke_token(session, shop_id=g.shop.id, token_id=token_id, actor=g.actor, now=utcnow())
    session.commit()
    return jsonify(token_json(token))


def member_json(member: StaffMember) -> dict[str, Any]:
    return {
        "user_id": member.user_id,
        "email": member.email,
        "role": member.role,
        "approval_limits": member.approval_limits or {},
    }


def token_json(token: StaffToken) -> dict[str, Any]:
    """Everything about a token but the token: its hash never leaves the database."""
    return {
        "id": str(token.id),
        "user_id": token.user_id,
        "prefix": token.prefix,
        "label": token.label,
        "created_by": token.created_by,
        "created_at": token.created_at.isoformat(),
        "expires_at": token.expires_at.isoformat(),
        "last_used_at": token.last_used_at.isoformat() if token.last_used_at else None,
        "revoked_at": token.revoked_at.isoformat() if token.revoked_at else None,
        "revoked_by": token.revoked_by,
    }


def _limits(body: dict[str, Any]) -> dict[str, object] | None:
    limits = body.get("approval_limits")
    if limits is not None and not isinstance(limits, dict):
        raise InvalidInput(said("approval_limits must be an object"), field="approval_limits")
    return limits
