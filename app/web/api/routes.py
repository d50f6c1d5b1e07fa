"""Staff API handlers: parse, call the domain, commit, then enqueue. Nothing else.

Every value read here is bounded by :mod:`app.validation`, the same rules the domain
applies, and described with the same bounds in :mod:`app.web.api.openapi`.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

from flask import Blueprint, Response, current_app, g, jsonify, request, stream_with_context
from sqlalchemy import select
from werkzeug.datastructures import MultiDict

from app.agents.models import AgentTool
from app.agents.service import (
    issue_agent_credential,
    list_agent_credentials,
    proposing_agent,
    proposing_agents,
    revoke_agent_credential,
)
from app.alerts.service import SlackSetup, alert_kinds, save_slack, slack_setup, webhook_url
from app.approvals.drafts import parse_draft
from app.approvals.service import (
    ProposalResult,
    approve_proposal,
    create_proposal,
    reject_proposal,
    revise_proposal,
)
from app.cases.models import CaseStatus
from app.cases.service import case_audit, get_case, list_cases, open_case
from app.cases.store_orders import shopify_customer_of
from app.clock import utcnow
from app.connections.adapters import AdapterFactory
from app.connections.merchant import rotate_merchant_secret, save_merchant_connection
from app.connections.models import Connection
from app.connections.service import (
    check_stripe_key,
    permission_advice,
    save_stripe_connection,
    stripe_webhook_url,
)
from app.conversations.service import staff_reply
from app.db import request_session
from app.drafting.service import latest_draft, reply_facts
from app.errors import InvalidInput, NotFound
from app.execution.brakes import (
    SETTING_NAMES,
    BrakeSettings,
    BrakeState,
    brake_state,
    resume,
    save_brakes,
)
from app.execution.models import Action, ActionAttempt, ActionStatus
from app.guard import Verdict
from app.helpdesk.connection import (
    gorgias_connection,
    rotate_secret,
    save_gorgias_connection,
    set_prepare_on_arrival,
)
from app.helpdesk.gorgias_desk import check_account
from app.history_audit.report import (
    EXPORT_FORMATS,
    FindingFilter,
    csv_export,
    current_scans,
    export_rows,
    json_export,
)
from app.history_audit.scan import DEFAULT_WINDOW_DAYS, newest_scans, start_scan
from app.inbox.case_file import case_file
from app.jobs.connection import RedisExtension
from app.money import Money
from app.settings import Settings
from app.shopify.admin_links import admin_case_url
from app.shops.policy_form import FIELDS, rules_from_form
from app.shops.service import current_policy, save_policy, set_kill_switch, set_writes_enabled
from app.validation import (
    DIGEST_LENGTH,
    LONG_TEXT,
    PAGE_DEFAULT,
    PAGE_MAXIMUM,
    REASON_TEXT,
    boolean,
    choice,
    integer,
    json_object,
    only_keys,
    optional_uuid,
    text,
)
from app.web.admin_text import in_reader_words, say
from app.web.api.openapi import OPENAPI
from app.web.api.parsing import json_body, text_field
from app.web.api.serialize import (
    action_json,
    agent_json,
    audit_json,
    case_summary_json,
    customer_json,
    drafting_json,
    history_scan_json,
    merchant_connected_json,
    message_json,
    money_json,
    order_json,
    proposal_json,
)
from app.web.auth import require_staff
from app.web.dispatch import commit_and_enqueue, queue_execution, queue_order_refresh, queue_scan
from app.whatif import Change, Replayed, WhatIf, what_if
from app.words import said
from integrations.provider import ProviderAdapter

bp = Blueprint("api", __name__, url_prefix="/api")


@bp.get("/openapi.json")
def openapi() -> Response:
    return jsonify(OPENAPI)


@bp.get("/cases")
@require_staff
def cases_index() -> Response:
    status = request.args.get("status")
    if status is not None:
        status = choice(status, "status", [s.value for s in CaseStatus])
    cases = list_cases(request_session(), g.shop.id, status)
    return jsonify({"cases": [case_summary_json(c) for c in cases]})


@bp.post("/cases")
@require_staff
def cases_create() -> tuple[Response, int]:
    body = json_body("subject", "request_text", "identity_level", "customer_id")
    session = request_session()
    case = open_case(
        session,
        shop=g.shop,
        actor=g.actor,
        customer_id=optional_uuid(body.get("customer_id"), "customer_id"),
        subject=text_field(body, "subject", required=True),
        request_text=text_field(body, "request_text", max_length=LONG_TEXT, multiline=True),
        identity_level=text_field(body, "identity_level") or "none",
        now=utcnow(),
    )
    session.commit()
    if (customer := shopify_customer_of(session, case)) is not None:
        queue_order_refresh(current_app, customer)
    return jsonify(case_summary_json(case)), 201


@bp.get("/cases/<uuid:case_id>")
@require_staff
def cases_show(case_id: uuid.UUID) -> Response:
    session = request_session()
    file = case_file(session, g.shop.id, case_id)
    agents = proposing_agents(session, (proposal for proposal, _ in file.proposals))
    return jsonify(
        {
            **case_summary_json(file.case),
            "instruction_attempt_at": (
                file.case.instruction_attempt_at.isoformat()
                if file.case.instruction_attempt_at
                else None
            ),
            "request_text": file.case.request_text,
            "customer": customer_json(file.customer),
            "orders": [order_json(o) for o in file.orders],
            "proposals": [
                proposal_json(p, approvals, agents.get(p.id)) for p, approvals in file.proposals
            ],
            "actions": [action_json(a, attempts) for a, attempts in file.actions],
            "drafting": drafting_json(latest_draft(session, file.case)),
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
    draft = parse_draft(json_body())
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


@bp.post("/cases/<uuid:case_id>/replies")
@require_staff
def case_reply(case_id: uuid.UUID) -> tuple[Response, int]:
    """A reply to the customer, checked against what the provider reported."""
    body = json_body("text")
    session = request_session()
    case = get_case(session, g.shop.id, case_id)
    facts, proposed = reply_facts(session, case)
    message = staff_reply(
        session,
        case=case,
        body=body.get("text"),  # type: ignore[arg-type]
        actor=g.actor,
        now=utcnow(),
        facts=facts,
        proposed=proposed,
    )
    session.commit()
    return jsonify({"message": message_json(message)}), 201


@bp.put("/proposals/<uuid:proposal_id>")
@require_staff
def proposals_update(proposal_id: uuid.UUID) -> tuple[Response, int]:
    draft = parse_draft(json_body())
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
    body = json_body("digest")
    result = approve_proposal(
        request_session(),
        shop=g.shop,
        proposal_id=proposal_id,
        actor=g.actor,
        digest=text_field(body, "digest", max_length=DIGEST_LENGTH, required=True),
        settings=_settings(),
        now=utcnow(),
    )
    return _commit_and_enqueue(result), 200


@bp.post("/proposals/<uuid:proposal_id>/reject")
@require_staff
def proposals_reject(proposal_id: uuid.UUID) -> tuple[Response, int]:
    body = json_body("reason")
    session = request_session()
    proposal = reject_proposal(
        session,
        shop=g.shop,
        proposal_id=proposal_id,
        actor=g.actor,
        reason=text_field(body, "reason", max_length=REASON_TEXT, required=True, multiline=True),
        now=utcnow(),
    )
    session.commit()
    return jsonify(
        {"proposal": proposal_json(proposal, agent=proposing_agent(session, proposal))}
    ), 200


@bp.get("/actions")
@require_staff
def actions_index() -> Response:
    """The shop's actions in the given statuses (all when none is given), newest first."""
    statuses = _statuses(request.args)
    limit = _limit(request.args.get("limit"))
    query = select(Action).where(Action.shop_id == g.shop.id)
    if statuses:
        query = query.where(Action.status.in_(statuses))
    query = query.order_by(Action.created_at.desc(), Action.id.desc()).limit(limit)
    actions = request_session().scalars(query)
    return jsonify({"actions": [action_json(a) for a in actions]})


@bp.get("/actions/<uuid:action_id>")
@require_staff
def actions_show(action_id: uuid.UUID) -> Response:
    session = request_session()
    action = session.get(Action, action_id)
    if action is None or action.shop_id != g.shop.id:
        raise NotFound(said("action not found"))
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
    enabled = boolean(json_body("enabled").get("enabled"), "enabled")
    set_writes_enabled(session, shop=g.shop, actor=g.actor, enabled=enabled, now=utcnow())
    session.commit()
    return jsonify({"writes_enabled": g.shop.writes_enabled})


@bp.put("/shop/kill-switch")
@require_staff
def shop_kill_switch() -> Response:
    session = request_session()
    engaged = boolean(json_body("engaged").get("engaged"), "engaged")
    set_kill_switch(session, shop=g.shop, actor=g.actor, engaged=engaged, now=utcnow())
    session.commit()
    return jsonify({"kill_switch": g.shop.kill_switch})


@bp.get("/shop/brakes")
@require_staff
def shop_brakes() -> Response:
    return jsonify(_brakes_json(brake_state(request_session(), g.shop.id)))


@bp.put("/shop/brakes")
@require_staff
def shop_brakes_save() -> Response:
    session = request_session()
    settings = BrakeSettings.from_dict(json_body(*SETTING_NAMES))
    save_brakes(session, shop=g.shop, actor=g.actor, settings=settings, now=utcnow())
    session.commit()
    return jsonify(_brakes_json(brake_state(session, g.shop.id)))


@bp.post("/shop/brakes/resume")
@require_staff
def shop_brakes_resume() -> Response:
    only_keys(json_body(), ())
    session = request_session()
    held = resume(session, shop=g.shop, actor=g.actor, now=utcnow())
    session.commit()
    for action_id in held:
        queue_execution(current_app, action_id)
    state = _brakes_json(brake_state(session, g.shop.id))
    return jsonify({**state, "resumed": [str(action_id) for action_id in held]})


@bp.get("/shop/alerts")
@require_staff
def shop_alerts() -> Response:
    return jsonify(_alerts_json(slack_setup(request_session(), g.shop.id)))


@bp.put("/shop/alerts")
@require_staff
def shop_alerts_save() -> Response:
    body = json_body("slack_webhook_url", "slack_kinds")
    keep_url = "slack_webhook_url" not in body
    given = body.get("slack_webhook_url")
    session = request_session()
    setup = save_slack(
        session,
        shop=g.shop,
        actor=g.actor,
        url=None if given is None else webhook_url(given),
        keep_url=keep_url,
        kinds=alert_kinds(body["slack_kinds"]) if "slack_kinds" in body else None,
        box=current_app.extensions["caseward.secret_box"],
        now=utcnow(),
    )
    session.commit()
    return jsonify(_alerts_json(setup))


@bp.put("/shop/policy")
@require_staff
def shop_policy() -> Response:
    session = request_session()
    rules = json_object(json_body("rules").get("rules"), "rules")
    policy = save_policy(session, shop=g.shop, actor=g.actor, rules=rules, now=utcnow())
    session.commit()
    return jsonify({"policy": policy.to_dict()})


@bp.put("/shop/policy/form")
@require_staff
def shop_policy_form() -> Response:
    session = request_session()
    fields = json_body(*FIELDS)
    rules = rules_from_form(fields, current_policy(session, g.shop.id))
    policy = save_policy(session, shop=g.shop, actor=g.actor, rules=rules, now=utcnow())
    session.commit()
    return jsonify({"policy": policy.to_dict()})


@bp.post("/shop/policy/what-if")
@require_staff
def shop_policy_what_if() -> Response:
    """What a candidate policy, sent as the form sends it or as rules, would have done to
    the shop's last 90 days; nothing is saved or changed."""
    session = request_session()
    body = json_body()
    if "rules" in body:
        only_keys(body, ("rules",))
        rules = json_object(body["rules"], "rules")
    else:
        rules = rules_from_form(body, current_policy(session, g.shop.id))
    result = what_if(session, shop_id=g.shop.id, actor=g.actor, rules=rules, now=utcnow())
    return jsonify(_what_if_json(result))


@bp.get("/agents")
@require_staff
def agents_list() -> Response:
    credentials = list_agent_credentials(request_session(), shop=g.shop, actor=g.actor)
    return jsonify({"agents": [agent_json(credential) for credential in credentials]})


@bp.post("/agents")
@require_staff
def agents_issue() -> tuple[Response, int]:
    body = json_body("name", "allowed_kinds", "ceiling", "allowed_tools")
    kinds = body.get("allowed_kinds")
    if not isinstance(kinds, list):
        raise InvalidInput(said("allowed_kinds is a list of action kinds"), field="allowed_kinds")
    # Left out: every tool, as before tools could be chosen.
    tools = body.get("allowed_tools", list(AgentTool))
    if not isinstance(tools, list):
        raise InvalidInput(said("allowed_tools is a list of tool names"), field="allowed_tools")
    ceiling = body.get("ceiling")
    if ceiling is not None and not isinstance(ceiling, dict):
        raise InvalidInput(
            said("ceiling maps a currency to minor units, or is null"), field="ceiling"
        )
    session = request_session()
    issued = issue_agent_credential(
        session,
        shop=g.shop,
        actor=g.actor,
        name=body.get("name"),  # type: ignore[arg-type]
        allowed_kinds=kinds,
        allowed_tools=tools,
        ceiling=ceiling,
        now=utcnow(),
    )
    session.commit()
    return jsonify({"agent": agent_json(issued.credential), "secret": issued.secret}), 201


@bp.delete("/agents/<uuid:credential_id>")
@require_staff
def agents_revoke(credential_id: uuid.UUID) -> Response:
    session = request_session()
    credential = revoke_agent_credential(
        session, shop=g.shop, actor=g.actor, credential_id=credential_id, now=utcnow()
    )
    session.commit()
    return jsonify({"agent": agent_json(credential)})


@bp.put("/shop/connections/gorgias")
@require_staff
def shop_connect_gorgias() -> Response:
    body = json_body("domain", "username", "api_key")
    session = request_session()
    settings = _settings()
    redis = RedisExtension.connection(current_app)
    saved = save_gorgias_connection(
        session,
        shop=g.shop,
        actor=g.actor,
        domain=body.get("domain"),
        username=body.get("username"),
        api_key=body.get("api_key"),
        box=current_app.extensions["caseward.secret_box"],
        check=lambda account: check_account(settings, redis, account),
        now=utcnow(),
    )
    session.commit()
    return jsonify(_gorgias_connected(saved.connection, saved.new_secret))


@bp.post("/shop/connections/gorgias/secret")
@require_staff
def shop_rotate_gorgias_secret() -> Response:
    json_body()
    session = request_session()
    secret = rotate_secret(
        session,
        shop=g.shop,
        actor=g.actor,
        box=current_app.extensions["caseward.secret_box"],
        now=utcnow(),
    )
    connection = gorgias_connection(session, g.shop.id)
    assert connection is not None
    session.commit()
    return jsonify(_gorgias_connected(connection, secret))


@bp.put("/shop/connections/gorgias/prepare-on-arrival")
@require_staff
def shop_gorgias_prepare_on_arrival() -> Response:
    session = request_session()
    enabled = boolean(json_body("enabled").get("enabled"), "enabled")
    connection = set_prepare_on_arrival(
        session, shop=g.shop, actor=g.actor, enabled=enabled, now=utcnow()
    )
    session.commit()
    return jsonify(_gorgias_connected(connection, None))


def _gorgias_connected(connection: Connection, secret: str | None) -> dict[str, Any]:
    base = (_settings().public_url or request.host_url).rstrip("/")
    return {
        "domain": connection.account_id,
        "key": connection.key_hint,
        "prepare_on_arrival": connection.prepare_on_arrival,
        "integration_secret": secret,
        "events_url": f"{base}/helpdesk/gorgias/{connection.id}/events",
        "sidebar_url": f"{base}/helpdesk/gorgias/{connection.id}/sidebar",
    }


@bp.put("/shop/connections/stripe")
@require_staff
def shop_connect_stripe() -> Response:
    body = json_body("api_key", "livemode", "webhook_secret")
    session = request_session()
    settings = _settings()
    # A merchant who brings a signing secret has registered the endpoint by hand.
    webhook_secret = text(body.get("webhook_secret"), "webhook_secret")
    base_url = settings.public_url or request.host_url
    saved = save_stripe_connection(
        session,
        shop=g.shop,
        actor=g.actor,
        api_key=text_field(body, "api_key", required=True),
        livemode=boolean(body.get("livemode"), "livemode"),
        webhook_secret=webhook_secret,
        box=current_app.extensions["caseward.secret_box"],
        now=utcnow(),
        webhook_base_url=base_url,
        api_base=settings.stripe_api_base or None,
        timeout_seconds=settings.provider_timeout_seconds,
    )
    # The read-only audit of the account's past money actions starts with the connection.
    scan = start_scan(session, shop=g.shop, provider="stripe", actor=g.actor, now=utcnow())
    session.commit()
    queue_scan(current_app, scan)
    return jsonify(
        {
            "provider": "stripe",
            "key": saved.connection.key_hint,
            "livemode": saved.connection.livemode,
            "webhook_url": stripe_webhook_url(base_url, saved.connection.id),
            "webhook_registered": saved.webhook_registered,
        }
    )


@bp.post("/shop/connections/stripe/test")
@require_staff
def shop_test_stripe_key() -> Response:
    body = json_body("api_key", "livemode")
    settings = _settings()
    report = check_stripe_key(
        request_session(),
        shop=g.shop,
        actor=g.actor,
        api_key=text_field(body, "api_key", required=True),
        livemode=boolean(body.get("livemode"), "livemode"),
        api_base=settings.stripe_api_base or None,
        timeout_seconds=settings.provider_timeout_seconds,
    )
    return jsonify(
        {
            "ok": report.ok,
            "granted": list(report.granted),
            "missing": list(report.missing),
            "unknown": list(report.unknown),
            "message": in_reader_words(permission_advice(report)),
        }
    )


@bp.put("/shop/connections/merchant")
@require_staff
def shop_connect_merchant() -> Response:
    body = json_body("endpoint_url")
    session = request_session()
    saved = save_merchant_connection(
        session,
        shop=g.shop,
        actor=g.actor,
        url=body.get("endpoint_url"),
        box=current_app.extensions["caseward.secret_box"],
        production=_settings().is_production,
        now=utcnow(),
    )
    session.commit()
    return jsonify(merchant_connected_json(saved))


@bp.post("/shop/connections/merchant/secret")
@require_staff
def shop_rotate_merchant_secret() -> Response:
    body = json_body("grace_seconds")
    session = request_session()
    rotated = rotate_merchant_secret(
        session,
        shop=g.shop,
        actor=g.actor,
        grace_seconds=body.get("grace_seconds"),
        box=current_app.extensions["caseward.secret_box"],
        now=utcnow(),
    )
    session.commit()
    return jsonify(merchant_connected_json(rotated))


@bp.get("/shop/history-audit")
@require_staff
def shop_history_audit() -> Response:
    scans = newest_scans(request_session(), g.shop.id)
    return jsonify({"scans": [history_scan_json(scan) for scan in scans]})


@bp.post("/shop/history-audit")
@require_staff
def shop_start_history_audit() -> tuple[Response, int]:
    body = json_body("provider", "window_days")
    session = request_session()
    scan = start_scan(
        session,
        shop=g.shop,
        provider=body.get("provider"),
        actor=g.actor,
        window_days=body.get("window_days", DEFAULT_WINDOW_DAYS),
        now=utcnow(),
    )
    session.commit()
    queue_scan(current_app, scan)
    return jsonify(history_scan_json(scan)), 202


@bp.get("/shop/history-audit/findings")
@require_staff
def shop_history_findings() -> Response:
    """The current report's findings as a file, streamed: every role may read them."""
    file_format = choice(request.args.get("format", "json"), "format", EXPORT_FORMATS)
    filters = FindingFilter.parse(request.args)
    scans = current_scans(request_session(), g.shop.id)
    write, mimetype = (
        (csv_export, "text/csv") if file_format == "csv" else (json_export, "application/json")
    )

    def body() -> Iterator[str]:
        # The view's session is closed when the view returns; the rows are read while the
        # answer is sent, on a session of their own that the answer's end closes.
        yield from write(export_rows(request_session(), scans, filters), in_reader_words)

    name = f"caseward-history-{g.shop.domain}.{file_format}"
    return Response(
        stream_with_context(body()),
        mimetype=mimetype,
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


# ------------------------------------------------------------------ helpers


def _settings() -> Settings:
    settings: Settings = current_app.config["CASEWARD_SETTINGS"]
    return settings


def _adapter(provider: str) -> ProviderAdapter:
    factory: AdapterFactory = current_app.extensions["caseward.adapters"]
    return factory(request_session(), g.shop.id, provider)


def _commit_and_enqueue(result: ProposalResult) -> Response:
    commit_and_enqueue(result)
    return jsonify(
        {
            "proposal": proposal_json(
                result.proposal, agent=proposing_agent(request_session(), result.proposal)
            ),
            "action": action_json(result.action) if result.action else None,
        }
    )


def _brakes_json(state: BrakeState) -> dict[str, Any]:
    tripped = None
    if state.tripped_at is not None:
        tripped = {
            "at": state.tripped_at.isoformat(),
            "rule": state.rule,
            "reason": in_reader_words(state.reason) if state.reason else None,
            "action_id": str(state.action_id) if state.action_id else None,
        }
    return {
        "settings": state.settings.to_dict(),
        "tripped": tripped,
        "held": {"count": state.held.count, "money": dict(state.held.money)},
    }


def _alerts_json(setup: SlackSetup) -> dict[str, Any]:
    return {
        "slack": {"hint": setup.hint} if setup.hint else None,
        "slack_kinds": setup.kinds,
        "signing_secret": setup.signing_secret,
    }


def _what_if_json(result: WhatIf) -> dict[str, Any]:
    return {
        "since": result.since.isoformat(),
        "until": result.until.isoformat(),
        "policy_version": result.current_version,
        "replayed": result.replayed,
        "reconstructed": result.reconstructed,
        "classes": {
            change.value: {
                "count": result.counts[change],
                "money": [
                    money_json(Money(amount, currency))
                    for currency, amount in result.money[change].items()
                ],
            }
            for change in Change
        },
        "items": [_replayed_json(done) for done in result.items],
        "items_total": result.changed,
    }


def _replayed_json(done: Replayed) -> dict[str, Any]:
    """One changed past action: where it is, what it was, and each policy's word on it."""
    item = done.item
    case_url = (
        admin_case_url(_settings().shopify_admin_origin, g.shop.domain, item.case_id)
        if item.case_id
        else None
    )
    return {
        "change": done.change.value,
        "reference": item.reference,
        "source": item.source.value,
        "reconstructed": item.reconstructed,
        "case_id": str(item.case_id) if item.case_id else None,
        "case_url": case_url,
        "kind": item.inputs.proposal.kind.value,
        "amount": money_json(done.amount),
        "at": done.at.isoformat(),
        "current": _outcome_json(done.current),
        "candidate": {
            **_outcome_json(done.candidate),
            "said": in_reader_words(done.candidate.approval_said),
            "failing": [
                {
                    "check": check.name,
                    "check_said": say("check", check.name),
                    "said": in_reader_words(check.said),
                }
                for check in done.candidate.failed
            ],
        },
    }


def _outcome_json(verdict: Verdict) -> dict[str, Any]:
    return {"outcome": verdict.outcome.value, "approvals_required": verdict.approvals_required}


def _statuses(args: MultiDict[str, str]) -> list[str]:
    known = [status.value for status in ActionStatus]
    return [choice(value, "status", known) for value in args.getlist("status")]


def _limit(value: str | None) -> int:
    if value is None:
        return PAGE_DEFAULT
    # Digits only: int() would also take " 7", "+7" and "1_0".
    if not value.isascii() or not value.isdigit() or len(value) > 10:
        raise InvalidInput(
            said("limit is a whole number from 1 to %(max)s", max=str(PAGE_MAXIMUM)),
            field="limit",
        )
    return integer(int(value), "limit", minimum=1, maximum=PAGE_MAXIMUM)
