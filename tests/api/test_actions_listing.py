"""GET /api/actions: the shop's actions by status, newest first, a bounded page, one shop only."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from api_support import OTHER_SHOP_DOMAIN, new_account, seed
from money_path_harness import Staff
from sqlalchemy.orm import Session

from app.demo import APPROVER, PROPOSER, LinenShop
from app.execution.models import Action
from app.settings import Settings
from integrations.stripe.sandbox import StripeSandbox


def _act(proposer: Staff, approver: Staff, linen: LinenShop, amount: int) -> str:
    """Propose and approve a refund; no worker runs, so the action stays queued."""
    proposed = proposer.post(
        f"/api/cases/{linen.case_id}/proposals",
        {"kind": "refund", "target": linen.payment_intent_id, "amount": amount, "currency": "usd"},
    )
    assert proposed.status_code == 201, proposed.get_json()
    proposal = proposed.get_json()["proposal"]
    approved = approver.post(
        f"/api/proposals/{proposal['id']}/approve", {"digest": proposal["digest"]}
    )
    assert approved.status_code == 200, approved.get_json()
    return str(approved.get_json()["action"]["id"])


def _listed(staff: Staff, query: str = "") -> list[dict[str, Any]]:
    response = staff.get(f"/api/actions{query}")
    assert response.status_code == 200, response.get_json()
    actions: list[dict[str, Any]] = response.get_json()["actions"]
    return actions


@pytest.fixture
def three_actions(
    linen: LinenShop, proposer: Staff, approver: Staff, session: Session
) -> list[str]:
    """Oldest first: one failed, two queued."""
    ids = [_act(proposer, approver, linen, amount) for amount in (1000, 1100, 1200)]
    failed = session.get(Action, uuid.UUID(ids[0]))
    assert failed is not None
    failed.status = "failed"  # as the provider would later report it
    session.commit()
    return ids


def test_actions_are_listed_by_status_newest_first(
    three_actions: list[str], approver: Staff
) -> None:
    oldest, middle, newest = three_actions

    queued = _listed(approver, "?status=queued")
    both = _listed(approver, "?status=queued&status=failed")
    everything = _listed(approver)

    assert [a["id"] for a in queued] == [newest, middle]
    assert {a["status"] for a in queued} == {"queued"}
    assert [a["id"] for a in both] == [newest, middle, oldest]
    assert [a["id"] for a in everything] == [newest, middle, oldest]
    assert _listed(approver, "?status=succeeded") == []


def test_the_page_is_bounded_by_limit(three_actions: list[str], approver: Staff) -> None:
    assert [a["id"] for a in _listed(approver, "?limit=1")] == [three_actions[-1]]
    assert len(_listed(approver, "?limit=200")) == 3


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("?status=everything", "status"),
        ("?status=queued&status=QUEUED", "status"),
        ("?limit=0", "limit"),
        ("?limit=201", "limit"),
        ("?limit=ten", "limit"),
        ("?limit=+5", "limit"),
        ("?limit=99999999999999999999", "limit"),
    ],
)
def test_a_bad_filter_is_refused_naming_it(
    linen: LinenShop, approver: Staff, query: str, field: str
) -> None:
    response = approver.get(f"/api/actions{query}")
    assert response.status_code == 400
    assert response.get_json()["error"]["field"] == field


def test_another_shops_actions_are_never_listed(
    three_actions: list[str],
    approver: Staff,
    staff: Callable[[str, str], Staff],
    sandbox: StripeSandbox,
    settings: Settings,
    session: Session,
) -> None:
    other = seed(session, settings, new_account(sandbox, settings), domain=OTHER_SHOP_DOMAIN)
    their_approver = staff(APPROVER, OTHER_SHOP_DOMAIN)
    theirs = _act(staff(PROPOSER, OTHER_SHOP_DOMAIN), their_approver, other, 500)

    ours = {a["id"] for a in _listed(approver)}
    their_list = {a["id"] for a in _listed(their_approver)}

    assert ours == set(three_actions)
    assert their_list == {theirs}
