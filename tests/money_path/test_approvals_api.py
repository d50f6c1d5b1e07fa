"""Approvals through the staff API: bound to a digest, single-use, expiring, role-checked.

Real PostgreSQL (or SQLite), Redis, an ``rq worker`` process and the Stripe sandbox over
HTTP; what happened at the provider is read back with the account's own secret key.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import jsonschema
import pytest
import requests
from audit_tampering import intruder
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from money_path_harness import Account, Staff, WorkerProcess, wait_for
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.audit import AuditEvent
from app.cases.proposals import Proposal
from app.demo import APPROVER, APRON_LINE, OWNER, PROPOSER, SHOP_DOMAIN, LinenShop
from app.execution.models import Action
from app.settings import Settings
from app.shops.models import StaffMember, StaffRole

SECOND_APPROVER = "alex.approver"
HTTP_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


# ------------------------------------------------------------------ fixtures


@pytest.fixture
def approval_ttl() -> int:
    """Seconds an approval stays valid; a test parametrizes it to see approvals expire."""
    return 24 * 3600


@pytest.fixture
def settings(settings: Settings, approval_ttl: int) -> Settings:
    return replace(settings, approval_ttl_seconds=approval_ttl)


@pytest.fixture
def add_staff(session: Session, linen: LinenShop) -> Callable[[str, str, dict[str, int]], None]:
    def add(user_id: str, role: str, limits: dict[str, int]) -> None:
        session.add(
            StaffMember(
                shop_id=linen.shop_id,
                user_id=user_id,
                email=f"{user_id}@{SHOP_DOMAIN}",
                role=role,
                approval_limits=limits,
            )
        )
        session.commit()

    return add


@pytest.fixture
def second_approver(
    add_staff: Callable[[str, str, dict[str, int]], None], staff: Callable[[str], Staff]
) -> Staff:
    add_staff(SECOND_APPROVER, StaffRole.APPROVER, {"usd": 10_000})
    return staff(SECOND_APPROVER)


# ------------------------------------------------------------------ helpers


def _ok(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, response.get_json()
    return response.get_json()


def _case(staff: Staff, linen: LinenShop) -> dict[str, Any]:
    return _ok(staff.get(f"/api/cases/{linen.case_id}"))


def _seeded_proposal(staff: Staff, linen: LinenShop) -> dict[str, Any]:
    return next(p for p in _case(staff, linen)["proposals"] if p["id"] == str(linen.proposal_id))


def _proposal(staff: Staff, linen: LinenShop, proposal_id: str) -> dict[str, Any]:
    return next(p for p in _case(staff, linen)["proposals"] if p["id"] == proposal_id)


def _refund_draft(linen: LinenShop, amount: int = 4800, **extra: Any) -> dict[str, Any]:
    return {
        "kind": "refund",
        "target": linen.payment_intent_id,
        "amount": amount,
        "currency": "usd",
        "line_items": [{"line_id": APRON_LINE, "amount": amount}],
        "params": {"reason": "requested_by_customer"},
        "reason": "One apron arrived torn.",
        **extra,
    }


def _propose(staff: Staff, linen: LinenShop, body: dict[str, Any]) -> dict[str, Any]:
    return _ok(staff.post(f"/api/cases/{linen.case_id}/proposals", body), 201)["proposal"]


def _edit(staff: Staff, proposal_id: str, body: dict[str, Any]) -> dict[str, Any]:
    return _ok(staff.put(f"/api/proposals/{proposal_id}", body))


def _approve(staff: Staff, proposal_id: str, digest: str) -> Any:
    return staff.post(f"/api/proposals/{proposal_id}/approve", {"digest": digest})


def _action(staff: Staff, action_id: str) -> dict[str, Any]:
    return _ok(staff.get(f"/api/actions/{action_id}"))


def _wait_status(staff: Staff, action_id: str, status: str) -> dict[str, Any]:
    def reached() -> dict[str, Any] | None:
        action = _action(staff, action_id)
        return action if action["status"] == status else None

    return wait_for(reached, what=f"action {action_id} to be {status}")


def _refunds(account: Account, linen: LinenShop) -> list[tuple[int, str, str]]:
    refunds = account.stripe.v1.refunds.list(params={"payment_intent": linen.payment_intent_id})
    return [(r.amount, r.currency, r.status) for r in refunds.data]


def _save_policy(owner: Staff, rules: dict[str, Any]) -> dict[str, Any]:
    policy: dict[str, Any] = _ok(owner.put("/api/shop/policy", {"rules": rules}))["policy"]
    return policy


def _failing(proposal: dict[str, Any]) -> dict[str, str]:
    return {c["name"]: c["reason"] for c in proposal["verdict"]["checks"] if not c["passed"]}


def _assert_chain_intact(runner: FlaskCliRunner) -> None:
    result = runner.invoke(args=["audit-verify", "--shop", SHOP_DOMAIN])
    assert result.exit_code == 0, result.output
    assert "chain intact" in result.output


def _aware(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _action_rows(session: Session, linen: LinenShop) -> int:
    rows = session.scalar(
        select(func.count()).select_from(Action).where(Action.proposal_id == linen.proposal_id)
    )
    return int(rows or 0)


def _not_postgres(settings: Settings) -> bool:
    return not settings.database_url.startswith("postgresql")


# ------------------------------------------------------------------ the digest


def test_approving_a_stale_digest_after_an_edit_is_refused_and_queues_nothing(
    linen: LinenShop, approver: Staff, proposer: Staff
) -> None:
    reviewed = _seeded_proposal(approver, linen)

    edited = _edit(proposer, reviewed["id"], _refund_draft(linen, 4700))["proposal"]
    assert edited["revision"] == reviewed["revision"] + 1
    assert edited["digest"] != reviewed["digest"]
    assert edited["status"] == "awaiting_approval"

    stale = _approve(approver, reviewed["id"], reviewed["digest"])
    assert stale.status_code == 409
    error = stale.get_json()["error"]
    assert error["code"] == "stale_digest"
    assert "review it again" in error["message"]
    assert _case(approver, linen)["actions"] == []

    fresh = _ok(_approve(approver, edited["id"], edited["digest"]))
    assert fresh["action"]["amount"]["amount"] == 4700
    assert fresh["action"]["digest"] == edited["digest"]


def test_editing_voids_the_approvals_given_and_the_edit_needs_fresh_ones(
    linen: LinenShop, owner: Staff, approver: Staff, proposer: Staff
) -> None:
    _save_policy(owner, {"two_person_threshold": {"usd": 4000}})
    proposal = _edit(proposer, str(linen.proposal_id), _refund_draft(linen))["proposal"]
    assert proposal["approvals_required"] == 2
    first = _ok(_approve(approver, proposal["id"], proposal["digest"]))
    assert first["action"] is None

    edited = _edit(proposer, proposal["id"], _refund_draft(linen, 4700))["proposal"]

    assert edited["revision"] == proposal["revision"] + 1
    [approval] = _proposal(owner, linen, proposal["id"])["approvals"]
    assert approval["approver"] == APPROVER
    assert approval["digest"] == proposal["digest"]
    assert approval["void_reason"] == "the proposal was edited"
    # The voided approval does not count towards the edit: it needs two fresh people.
    after_owner = _ok(_approve(owner, edited["id"], edited["digest"]))
    assert after_owner["action"] is None
    assert after_owner["proposal"]["status"] == "awaiting_approval"
    action = _ok(_approve(approver, edited["id"], edited["digest"]))["action"]
    assert action is not None
    assert sorted(action["approved_by"]) == sorted([OWNER, APPROVER])
    assert action["amount"]["amount"] == 4700


def test_the_same_person_cannot_approve_twice(linen: LinenShop, approver: Staff) -> None:
    proposal = _seeded_proposal(approver, linen)
    _ok(_approve(approver, proposal["id"], proposal["digest"]))

    again = _approve(approver, proposal["id"], proposal["digest"])

    assert again.status_code == 409
    assert again.get_json()["error"]["message"]
    assert len(_case(approver, linen)["actions"]) == 1


def test_an_approval_used_by_an_action_is_not_reused_after_an_edit(
    linen: LinenShop,
    approver: Staff,
    proposer: Staff,
    account: Account,
    start_worker: Callable[[], WorkerProcess],
    runner: FlaskCliRunner,
) -> None:
    proposal = _seeded_proposal(approver, linen)
    first = _ok(_approve(approver, proposal["id"], proposal["digest"]))["action"]

    edit = _edit(proposer, proposal["id"], _refund_draft(linen, 4700))

    assert edit["action"] is None, "the consumed approval must not approve the edit"
    assert edit["proposal"]["status"] == "awaiting_approval"
    halted = _action(approver, first["id"])
    assert halted["status"] == "halted"
    assert "edited" in halted["status_reason"]
    [approval] = _proposal(approver, linen, proposal["id"])["approvals"]
    assert approval["consumed_by_action"] == first["id"]
    assert approval["void_reason"]

    second = _ok(_approve(approver, proposal["id"], edit["proposal"]["digest"]))["action"]
    assert second["id"] != first["id"]
    start_worker()
    _wait_status(approver, second["id"], "succeeded")
    assert _refunds(account, linen) == [(4700, "usd", "succeeded")]
    assert _action(approver, first["id"])["attempts"] == []
    _assert_chain_intact(runner)


@pytest.mark.parametrize("approval_ttl", [1])
def test_an_approval_that_expires_before_the_worker_runs_sends_nothing(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    start_worker: Callable[[], WorkerProcess],
) -> None:
    proposal = _seeded_proposal(approver, linen)
    action = _ok(_approve(approver, proposal["id"], proposal["digest"]))["action"]
    [approval] = _proposal(approver, linen, proposal["id"])["approvals"]
    expires_at = _aware(approval["expires_at"])
    assert (expires_at - _aware(approval["created_at"])).total_seconds() == 1
    wait_for(lambda: datetime.now(UTC) > expires_at, what="the approval to expire")

    start_worker()

    expired = _wait_status(approver, action["id"], "expired")
    assert "expired" in expired["status_reason"]
    assert expired["attempts"] == []
    assert _refunds(account, linen) == []
    case = _case(approver, linen)
    assert case["status"] == "needs_attention"
    assert case["owner"] == APPROVER


# ------------------------------------------------------------------ concurrency


def _concurrently(requests_to_make: list[Callable[[], requests.Response]]) -> list[Any]:
    barrier = threading.Barrier(len(requests_to_make))
    results: list[Any] = [None] * len(requests_to_make)

    def run(index: int) -> None:
        barrier.wait()
        results[index] = requests_to_make[index]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(requests_to_make))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return results


def _http_approve(
    app: Flask, web_url: str, user_id: str, proposal: dict[str, Any]
) -> Callable[[], requests.Response]:
    token = Staff.issue_token(app, SHOP_DOMAIN, user_id)
    return lambda: requests.post(
        f"{web_url}/api/proposals/{proposal['id']}/approve",
        json={"digest": proposal["digest"]},
        headers={"Authorization": f"Bearer {token}"},
        timeout=20,
    )


@pytest.fixture
def postgres_only(settings: Settings) -> None:
    if _not_postgres(settings):
        pytest.skip("SQLite has no row locks: concurrent approvals need PostgreSQL")


@pytest.mark.usefixtures("postgres_only")
def test_two_people_approving_at_once_make_one_action_and_one_refund(
    app: Flask,
    web_url: str,
    linen: LinenShop,
    approver: Staff,
    second_approver: Staff,
    account: Account,
    worker: WorkerProcess,
    session: Session,
) -> None:
    proposal = _seeded_proposal(approver, linen)

    answers = _concurrently(
        [
            _http_approve(app, web_url, APPROVER, proposal),
            _http_approve(app, web_url, SECOND_APPROVER, proposal),
        ]
    )

    assert sorted(a.status_code for a in answers) == [200, 409], [a.text for a in answers]
    won = next(a.json() for a in answers if a.status_code == 200)
    lost = next(a.json() for a in answers if a.status_code == 409)
    assert lost["error"]["message"]
    [action] = _case(approver, linen)["actions"]
    assert action["id"] == won["action"]["id"]
    assert _action_rows(session, linen) == 1
    _wait_status(approver, action["id"], "succeeded")
    assert _refunds(account, linen) == [(4800, "usd", "succeeded")]


@pytest.mark.usefixtures("postgres_only")
def test_two_people_approving_at_once_under_the_two_person_rule_make_exactly_one_action(
    app: Flask,
    web_url: str,
    linen: LinenShop,
    owner: Staff,
    approver: Staff,
    proposer: Staff,
    second_approver: Staff,
    session: Session,
) -> None:
    _save_policy(owner, {"two_person_threshold": {"usd": 4000}})
    proposal = _edit(proposer, str(linen.proposal_id), _refund_draft(linen))["proposal"]
    assert proposal["approvals_required"] == 2

    answers = _concurrently(
        [
            _http_approve(app, web_url, APPROVER, proposal),
            _http_approve(app, web_url, SECOND_APPROVER, proposal),
        ]
    )

    assert [a.status_code for a in answers] == [200, 200], [a.text for a in answers]
    assert sum(a.json()["action"] is not None for a in answers) == 1
    [action] = _case(approver, linen)["actions"]
    assert sorted(action["approved_by"]) == sorted([APPROVER, SECOND_APPROVER])
    assert _action_rows(session, linen) == 1


# ------------------------------------------------------------------ roles


def test_a_proposer_cannot_approve(linen: LinenShop, proposer: Staff, approver: Staff) -> None:
    proposal = _seeded_proposal(proposer, linen)

    response = _approve(proposer, proposal["id"], proposal["digest"])

    assert response.status_code == 403
    error = response.get_json()["error"]
    assert error["code"] == "role_not_allowed"
    assert PROPOSER in error["message"]
    assert _case(approver, linen)["actions"] == []


def test_someone_without_a_role_can_neither_propose_nor_approve(
    linen: LinenShop, staff: Callable[[str], Staff], approver: Staff, session: Session
) -> None:
    stranger = staff("mallory.stranger")
    proposal = _seeded_proposal(approver, linen)
    proposals_before = session.scalar(select(func.count()).select_from(Proposal))

    proposed = stranger.post(f"/api/cases/{linen.case_id}/proposals", _refund_draft(linen, 1000))
    approved = _approve(stranger, proposal["id"], proposal["digest"])

    for response in (proposed, approved):
        assert response.status_code == 403
        assert response.get_json()["error"]["code"] == "no_role"
        assert "no role" in response.get_json()["error"]["message"]
    assert session.scalar(select(func.count()).select_from(Proposal)) == proposals_before
    assert _case(approver, linen)["actions"] == []


@pytest.mark.parametrize(("limits", "says"), [({"usd": 2000}, "up to $20.00"), ({}, "up to $0.00")])
def test_an_approver_above_their_limit_is_refused(
    linen: LinenShop,
    add_staff: Callable[[str, str, dict[str, int]], None],
    staff: Callable[[str], Staff],
    approver: Staff,
    limits: dict[str, int],
    says: str,
) -> None:
    add_staff("lee.junior", StaffRole.APPROVER, limits)
    junior = staff("lee.junior")
    proposal = _seeded_proposal(junior, linen)

    response = _approve(junior, proposal["id"], proposal["digest"])

    assert response.status_code == 403
    error = response.get_json()["error"]
    assert error["code"] == "over_approval_limit"
    assert says in error["message"]
    assert "$48.00" in error["message"]
    assert _case(approver, linen)["actions"] == []


def test_two_person_rule_needs_two_approvers_other_than_the_proposer(
    linen: LinenShop,
    owner: Staff,
    approver: Staff,
    second_approver: Staff,
    account: Account,
    worker: WorkerProcess,
    runner: FlaskCliRunner,
) -> None:
    before = _ok(owner.get("/api/shop"))["policy"]["version"]
    saved = _save_policy(owner, {"two_person_threshold": {"usd": 4000}})
    assert saved["version"] == before + 1
    assert _ok(owner.get("/api/shop"))["policy"]["version"] == saved["version"]
    # An approver proposes this time, so the rule has someone to keep out.
    proposal = _propose(approver, linen, _refund_draft(linen))
    assert proposal["status"] == "awaiting_approval"
    assert proposal["approvals_required"] == 2
    assert proposal["policy_version"] == saved["version"]
    assert "Two people" in proposal["verdict"]["approval_reason"]

    own = _approve(approver, proposal["id"], proposal["digest"])
    assert own.status_code == 403
    assert own.get_json()["error"]["code"] == "two_person_rule"

    first = _ok(_approve(owner, proposal["id"], proposal["digest"]))
    assert first["action"] is None
    assert first["proposal"]["status"] == "awaiting_approval"
    twice = _approve(owner, proposal["id"], proposal["digest"])
    assert twice.status_code == 409
    assert twice.get_json()["error"]["code"] == "already_approved"

    action = _ok(_approve(second_approver, proposal["id"], proposal["digest"]))["action"]
    assert sorted(action["approved_by"]) == sorted([OWNER, SECOND_APPROVER])
    _wait_status(owner, action["id"], "succeeded")
    assert _refunds(account, linen) == [(4800, "usd", "succeeded")]
    _assert_chain_intact(runner)


# ------------------------------------------------------------------ policy versions


def test_an_action_approved_under_one_policy_is_halted_if_the_policy_changes_before_it_runs(
    linen: LinenShop,
    owner: Staff,
    approver: Staff,
    account: Account,
    start_worker: Callable[[], WorkerProcess],
) -> None:
    proposal = _seeded_proposal(approver, linen)
    action = _ok(_approve(approver, proposal["id"], proposal["digest"]))["action"]
    saved = _save_policy(owner, {"duplicate_window_seconds": 3600})
    assert saved["version"] > proposal["policy_version"]

    start_worker()

    halted = _wait_status(approver, action["id"], "halted")
    assert "policy changed after approval" in halted["status_reason"]
    assert halted["attempts"] == []
    assert _refunds(account, linen) == []
    case = _case(approver, linen)
    assert case["status"] == "needs_attention"
    assert case["owner"] == APPROVER


def test_a_proposal_reviewed_under_an_older_policy_cannot_be_approved_under_the_new_one(
    linen: LinenShop, owner: Staff, approver: Staff
) -> None:
    reviewed = _seeded_proposal(approver, linen)
    assert reviewed["approvals_required"] == 1
    _save_policy(owner, {"two_person_threshold": {"usd": 4000}})

    response = _approve(approver, reviewed["id"], reviewed["digest"])

    # The digest covers the policy version: what was reviewed is no longer what applies.
    assert response.status_code == 409, response.get_json()
    assert response.get_json()["error"]["code"] == "stale_digest"
    assert _case(approver, linen)["actions"] == []


def test_an_action_kind_the_policy_does_not_enable_is_blocked_naming_it(
    linen: LinenShop, owner: Staff, approver: Staff, proposer: Staff
) -> None:
    _save_policy(owner, {"enabled_kinds": ["refund"]})

    proposal = _propose(
        proposer,
        linen,
        {"kind": "customer_credit", "target": linen.customer_id, "amount": 1000, "currency": "usd"},
    )

    assert proposal["status"] == "blocked"
    failing = _failing(proposal)
    assert "customer credit" in failing["kind_enabled"]
    refused = _approve(approver, proposal["id"], proposal["digest"])
    assert refused.status_code == 409
    assert refused.get_json()["error"]["code"] == "proposal_blocked"


# ------------------------------------------------------------------ bad input


def _draft_with(linen: LinenShop, **changes: Any) -> dict[str, Any]:
    return {**_refund_draft(linen), **changes}


BAD_DRAFTS: dict[str, tuple[Callable[[LinenShop], Any], str]] = {
    "not JSON": (lambda _: "{amount: 4800", "body"),
    "a JSON list": (lambda linen: [_refund_draft(linen)], "body"),
    "amount as a float": (lambda linen: _draft_with(linen, amount=48.0), "amount"),
    "amount as a string": (lambda linen: _draft_with(linen, amount="4800"), "amount"),
    "amount as a boolean": (lambda linen: _draft_with(linen, amount=True), "amount"),
    "negative amount": (lambda linen: _draft_with(linen, amount=-4800), "amount"),
    "zero amount": (lambda linen: _draft_with(linen, amount=0), "amount"),
    "unknown currency": (lambda linen: _draft_with(linen, currency="zzz"), "currency"),
    "unknown kind": (lambda linen: _draft_with(linen, kind="chargeback"), "kind"),
    "refund of a customer": (lambda linen: _draft_with(linen, target=linen.customer_id), "target"),
    "cancel without timing": (
        lambda _: {"kind": "subscription_cancel", "target": "sub_123", "params": {}},
        "params.at_period_end",
    ),
}


@pytest.mark.parametrize("case_name", list(BAD_DRAFTS))
def test_bad_input_is_refused_naming_the_field_and_nothing_is_written(
    linen: LinenShop, client: FlaskClient, proposer: Staff, session: Session, case_name: str
) -> None:
    make_body, field = BAD_DRAFTS[case_name]
    body = make_body(linen)
    proposals_before = session.scalar(select(func.count()).select_from(Proposal))
    events_before = session.scalar(select(func.count()).select_from(AuditEvent))
    headers = proposer._headers
    url = f"/api/cases/{linen.case_id}/proposals"

    if isinstance(body, str):
        response = client.post(url, data=body, content_type="application/json", headers=headers)
    else:
        response = client.post(url, json=body, headers=headers)

    assert response.status_code == 400
    assert response.is_json
    error = response.get_json()["error"]
    assert error["field"] == field
    assert error["code"] == "invalid_input"
    assert error["message"]
    assert session.scalar(select(func.count()).select_from(Proposal)) == proposals_before
    assert session.scalar(select(func.count()).select_from(AuditEvent)) == events_before


def test_a_bad_edit_or_approval_body_changes_nothing(
    linen: LinenShop, approver: Staff, proposer: Staff
) -> None:
    proposal = _seeded_proposal(approver, linen)

    edit = proposer.put(f"/api/proposals/{proposal['id']}", _draft_with(linen, amount=47.5))
    approve = approver.post(f"/api/proposals/{proposal['id']}/approve", {"digest": 42})

    assert edit.status_code == 400
    assert edit.get_json()["error"]["field"] == "amount"
    assert approve.status_code == 400
    assert approve.get_json()["error"]["field"] == "digest"
    after = _seeded_proposal(approver, linen)
    assert (after["revision"], after["digest"]) == (proposal["revision"], proposal["digest"])
    assert _case(approver, linen)["actions"] == []


# ------------------------------------------------------------------ OpenAPI


def _openapi_path(rule: str) -> str:
    return re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", r"{\1}", rule)


def _api_routes(app: Flask) -> dict[str, set[str]]:
    routes: dict[str, set[str]] = {}
    for rule in app.url_map.iter_rules():
        # The document does not describe itself; every other /api route must be in it.
        if not rule.rule.startswith("/api/") or rule.rule == "/api/openapi.json":
            continue
        methods = {m.lower() for m in (rule.methods or set())} - {"head", "options"}
        routes.setdefault(_openapi_path(rule.rule), set()).update(methods)
    return routes


def _walk_refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _walk_refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _walk_refs(item)


def _resolve(document: dict[str, Any], ref: str) -> Any:
    assert ref.startswith("#/"), ref
    node: Any = document
    for part in ref[2:].split("/"):
        node = node[part]
    return node


@pytest.fixture
def openapi(client: FlaskClient) -> dict[str, Any]:
    response = client.get("/api/openapi.json")
    assert response.status_code == 200
    document: dict[str, Any] = response.get_json()
    return document


def test_the_openapi_document_describes_exactly_the_api_routes(
    app: Flask, openapi: dict[str, Any]
) -> None:
    assert re.fullmatch(r"3\.1\.\d+", openapi["openapi"])
    assert openapi["info"]["title"]
    assert openapi["info"]["version"]
    documented = {
        path: {key for key in item if key in HTTP_METHODS}
        for path, item in openapi["paths"].items()
    }
    assert documented == _api_routes(app)

    schemes = openapi["components"]["securitySchemes"]
    for ref in _walk_refs(openapi):
        assert _resolve(openapi, ref) is not None, ref
    for schema in openapi["components"]["schemas"].values():
        jsonschema.Draft202012Validator.check_schema(schema)
    for path, item in openapi["paths"].items():
        operations = {method: op for method, op in item.items() if method in HTTP_METHODS}
        for method, operation in operations.items():
            assert operation["responses"], (method, path)
            for code, answer in operation["responses"].items():
                assert re.fullmatch(r"[1-5](\d\d|XX)|default", code), (method, path, code)
                assert answer["description"], (method, path, code)
            for requirement in operation.get("security", []):
                assert set(requirement) <= set(schemes), (method, path)


def test_the_openapi_document_declares_every_path_parameter(openapi: dict[str, Any]) -> None:
    missing = []
    for path, item in openapi["paths"].items():
        for name in re.findall(r"{([^}]+)}", path):
            for method in item.keys() & HTTP_METHODS:
                declared = [
                    p
                    for p in item.get("parameters", []) + item[method].get("parameters", [])
                    if p.get("in") == "path" and p.get("name") == name and p.get("required")
                ]
                if not declared:
                    missing.append(f"{method.upper()} {path}: {name}")
    assert missing == [], "OpenAPI 3.1 requires each {template} as a required path parameter"


def test_the_openapi_document_gives_the_status_codes_the_api_answers(
    linen: LinenShop, openapi: dict[str, Any], proposer: Staff
) -> None:
    opened = proposer.post("/api/cases", {"subject": "Where is my order?"})
    proposed = proposer.post(f"/api/cases/{linen.case_id}/proposals", _refund_draft(linen, 1000))
    answered = {
        ("/api/cases", "post"): opened.status_code,
        ("/api/cases/{case_id}/proposals", "post"): proposed.status_code,
    }

    documented = {key: sorted(openapi["paths"][key[0]][key[1]]["responses"]) for key in answered}
    for key, status in answered.items():
        assert str(status) in documented[key], (key, status, documented[key])


# ------------------------------------------------------------------ the audit trail


def test_the_audit_trail_tells_who_proposed_approved_what_was_sent_and_answered(
    linen: LinenShop,
    approver: Staff,
    account: Account,
    worker: WorkerProcess,
    runner: FlaskCliRunner,
    session: Session,
) -> None:
    proposal = _seeded_proposal(approver, linen)
    action = _ok(_approve(approver, proposal["id"], proposal["digest"]))["action"]
    done = _wait_status(approver, action["id"], "succeeded")
    [refund] = account.stripe.v1.refunds.list(params={"payment_intent": linen.payment_intent_id})

    events = _ok(approver.get(f"/api/cases/{linen.case_id}/audit"))["events"]
    by_kind = {e["kind"]: e for e in events}

    proposed = by_kind["proposal.created"]
    assert proposed["actor"] == PROPOSER
    assert proposed["data"]["digest"] == proposal["digest"]
    assert proposed["data"]["verdict"]["outcome"] == "needs_approval"
    assert proposed["data"]["verdict"]["checks"]
    approved = by_kind["proposal.approved"]
    assert approved["actor"] == APPROVER
    assert approved["data"]["digest"] == proposal["digest"]
    queued = by_kind["action.queued"]
    assert queued["action_id"] == action["id"]
    assert (queued["data"]["amount"], queued["data"]["currency"]) == (4800, "usd")
    assert queued["data"]["target"] == linen.payment_intent_id
    sent = by_kind["action.submit"]
    assert sent["data"]["idempotency_key"] == done["idempotency_key"]
    answered = by_kind["action.provider_status"]
    assert (answered["actor"], answered["actor_surface"]) == ("system:provider:stripe", "provider")
    assert answered["data"]["provider_ref"] == refund.id
    assert answered["data"]["status"] == "succeeded"
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(seqs)
    _assert_chain_intact(runner)

    # The check can fail: alter one recorded event and the chain names it.
    tampered = session.scalars(
        select(AuditEvent).where(
            AuditEvent.shop_id == linen.shop_id, AuditEvent.seq == approved["seq"]
        )
    ).one()
    with intruder(session):
        tampered.data = {**tampered.data, "digest": "0" * 64}
        session.flush()
    result = runner.invoke(args=["audit-verify", "--shop", SHOP_DOMAIN])
    assert result.exit_code == 1
    assert f"event {approved['seq']}" in result.output
