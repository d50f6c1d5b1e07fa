"""Staff API handlers: parse, call the domain, commit, then enqueue. Nothing else."""

from __future__ import annotations

import uuid
from typing import Any

from flask import Blueprint, Response, current_app, g, jsonify, request
from sqlalchemy import select

from app.approvals.drafts import parse_draft
from app.approvals.service import (
    ProposalResult,
    approve_proposal,
    create_proposal,
    reject_proposal,
    revise_proposal,
)
from app.cases.service import case_audit, case_file, get_case, list_cases, open_case
from app.clock import utcnow
from app.connections.models import Connection
from app.connections.service import connect_stripe
from app.db import request_session
from app.errors import InvalidInput, NotFound
from app.execution.models import Action, ActionAttempt
from app.execution.providers import AdapterFactory
from app.execution.queueing import enqueue_execution
from app.queue import RedisExtension
from app.settings import Settings
from app.shops.service import current_policy, save_policy, set_kill_switch, set_writes_enabled
from app.web.api.openapi import OPENAPI
from app.web.api.serialize import (
    action_json,
    audit_json,
    case_summary_json,
    customer_json,
    order_json,
    proposal_json,
)
from app.web.auth import require_staff
from integrations.provider import ProviderAdapter

bp = Blueprint("api", __name__, url_prefix="/api")


@bp.get("/openapi.json")
def openapi() -> Response:
    return jsonify(OPENAPI)


@bp.get("/cases")
@require_staff
def cases_index() -> Response:
    status = request.args.get("status")
    cases = list_cases(request_session(), g.shop.id, status)
    return jsonify({"cases": [case_summary_json(c) for c in cases]})


@bp.post("/cases")
@require_staff
def cases_create() -> tuple[Response, int]:
    body = _json_body()
    session = request_session()
    case = open_case(
        session,
        shop=g.shop,
        actor=g.actor,
        customer_id=_optional_uuid(body.get("customer_id"), "customer_id"),
        subject=_text(body, "subject", required=True),
        request_text=_text(body, "request_text"),
        identity_level=_text(body, "identity_level") or "none",
        now=utcnow(),
    )
    session.commit()
    return jsonify(case_summary_json(case)), 201


@bp.get("/cases/<uuid:case_id>")
@require_staff
def cases_show(case_id: uuid.UUID) -> Response:
    file = case_file(request_session(), g.shop.id, case_id)
    return jsonify(
        {
            **case_summary_json(file.case),
            "request_text": file.case.request_text,
            "customer": customer_json(file.customer),
            "orders": [order_json(o) for o in file.orders],
            "proposals": [proposal_json(p, approvals) for p, approvals in file.proposals],
            "actions": [action_json(a, attempts) for a, attempts in file.actions],
        }
    )


@bp.get("/cases/<uuid:case_id>/audit")
@require_staff
def cases_audit(case_id: uuid.UUID) -> Response:
    events = case_audit(request_session(), g.shop.id, case_id)
    return jsonify({"events": [audit_json(e) for e in events]})


@bp.post("/cases/<uuid:case_id>/proposals")
@require_staff
def proposals_create(case_id: uuid.UUID) -> tuple[Response, int]:
    session = request_session()
    case = get_case(session, g.shop.id, case_id)
    draft = parse_draft(_json_body())
    result = create_proposal(
        session,
        shop=g.shop,
        case=case,
        actor=g.actor,
        draft=draft,
        adapter=_adapter(draft.provider),
        settings=_settings(),
        now=utcnow(),
    )
    return _commit_and_enqueue(result), 201


@bp.put("/proposals/<uuid:proposal_id>")
@require_staff
def proposals_update(proposal_id: uuid.UUID) -> tuple[Response, int]:
    draft = parse_draft(_json_body())
    result = revise_proposal(
        request_session(),
        shop=g.shop,
        proposal_id=proposal_id,
        actor=g.actor,
        draft=draft,
        adapter=_adapter(draft.provider),
        settings=_settings(),
        now=utcnow(),
    )
    return _commit_and_enqueue(result), 200


@bp.post("/proposals/<uuid:proposal_id>/approve")
@require_staff
def proposals_approve(proposal_id: uuid.UUID) -> tuple[Response, int]:
    body = _json_body()
    result = approve_proposal(
        request_session(),
        shop=g.shop,
        proposal_id=proposal_id,
        actor=g.actor,
        digest=_text(body, "digest", required=True),
        settings=_settings(),
        now=utcnow(),
    )
    return _commit_and_enqueue(result), 200


@bp.post("/proposals/<uuid:proposal_id>/reject")
@require_staff
def proposals_reject(proposal_id: uuid.UUID) -> tuple[Response, int]:
    body = _json_body()
    session = request_session()
    proposal = reject_proposal(
        session,
        shop=g.shop,
        proposal_id=proposal_id,
        actor=g.actor,
        reason=_text(body, "reason", required=True),
        now=utcnow(),
    )
    session.commit()
    return jsonify({"proposal": proposal_json(proposal)}), 200


@bp.get("/actions/<uuid:action_id>")
@require_staff
def actions_show(action_id: uuid.UUID) -> Response:
    session = request_session()
    action = session.get(Action, action_id)
    if action is None or action.shop_id != g.shop.id:
        raise NotFound("action not found")
    attempts = list(
        session.scalars(
            select(ActionAttempt)
            .where(ActionAttempt.action_id == action.id)
            .order_by(ActionAttempt.number)
        )
    )
    return jsonify(action_json(action, attempts))


@bp.get("/shop")
@require_staff
def shop_show() -> Response:
    session = request_session()
    policy = current_policy(session, g.shop.id)
    connections = session.scalars(select(Connection).where(Connection.shop_id == g.shop.id))
    return jsonify(
        {
            "domain": g.shop.domain,
            "name": g.shop.name,
            "writes_enabled": g.shop.writes_enabled,
            "kill_switch": g.shop.kill_switch,
            "policy": policy.to_dict(),
            "connections": [
                {"provider": c.provider, "key": c.key_hint, "livemode": c.livemode}
                for c in connections
            ],
        }
    )


@bp.put("/shop/writes")
@require_staff
def shop_writes() -> Response:
    session = request_session()
    enabled = _bool(_json_body(), "enabled")
    set_writes_enabled(session, shop=g.shop, actor=g.actor, enabled=enabled, now=utcnow())
    session.commit()
    return jsonify({"writes_enabled": g.shop.writes_enabled})


@bp.put("/shop/kill-switch")
@require_staff
def shop_kill_switch() -> Response:
    session = request_session()
    engaged = _bool(_json_body(), "engaged")
    set_kill_switch(session, shop=g.shop, actor=g.actor, engaged=engaged, now=utcnow())
    session.commit()
    return jsonify({"kill_switch": g.shop.kill_switch})


@bp.put("/shop/policy")
@require_staff
def shop_policy() -> Response:
    session = request_session()
    rules = _json_body().get("rules")
    if not isinstance(rules, dict):
        raise InvalidInput("rules must be an object", field="rules")
    policy = save_policy(session, shop=g.shop, actor=g.actor, rules=rules, now=utcnow())
    session.commit()
    return jsonify({"policy": policy.to_dict()})


@bp.put("/shop/connections/stripe")
@require_staff
def shop_connect_stripe() -> Response:
    body = _json_body()
    session = request_session()
    connection = connect_stripe(
        session,
        shop=g.shop,
        actor=g.actor,
        api_key=_text(body, "api_key", required=True),
        livemode=_bool(body, "livemode"),
        webhook_secret=_text(body, "webhook_secret") or None,
        box=current_app.extensions["caseward.secret_box"],
        now=utcnow(),
    )
    session.commit()
    return jsonify(
        {
            "provider": "stripe",
            "key": connection.key_hint,
            "livemode": connection.livemode,
            "webhook_url": f"/webhooks/stripe/{connection.id}",
        }
    )


# ------------------------------------------------------------------ helpers


def _settings() -> Settings:
    settings: Settings = current_app.config["CASEWARD_SETTINGS"]
    return settings


def _adapter(provider: str) -> ProviderAdapter:
    factory: AdapterFactory = current_app.extensions["caseward.adapters"]
    return factory(request_session(), g.shop.id, provider)


def _commit_and_enqueue(result: ProposalResult) -> Response:
    request_session().commit()
    if result.action is not None:
        enqueue_execution(RedisExtension.queue(current_app), result.action.id)
    return jsonify(
        {
            "proposal": proposal_json(result.proposal),
            "action": action_json(result.action) if result.action else None,
        }
    )


def _json_body() -> dict[str, Any]:
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        raise InvalidInput("the request body must be a JSON object", field="body")
    return body


def _text(body: dict[str, Any], name: str, *, required: bool = False) -> str:
    value = body.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise InvalidInput(f"{name} is required text", field=name)
    return value


def _bool(body: dict[str, Any], name: str) -> bool:
    value = body.get(name)
    if not isinstance(value, bool):
        raise InvalidInput(f"{name} must be true or false", field=name)
    return value


def _optional_uuid(value: object, name: str) -> uuid.UUID | None:
    if value is None:
        return None
    try:
        return uuid.UUID(str(value))
    except ValueError:
        raise InvalidInput(f"{name} must be an id", field=name) from None
