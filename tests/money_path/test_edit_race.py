"""An edit racing a worker that is already sending never relabels the action."""

from __future__ import annotations

import threading
import uuid

import pytest
from fault_support import approve, case_json
from money_path_harness import Staff, wait_for
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from app.demo import APRON_LINE, LinenShop
from app.execution.models import Action, ActionStatus
from app.settings import Settings


def test_an_edit_waits_for_the_worker_and_then_refuses(
    linen: LinenShop, approver: Staff, proposer: Staff, session: Session, settings: Settings
) -> None:
    if not settings.database_url.startswith("postgresql"):
        pytest.skip("the race needs row locks: PostgreSQL only")
    proposal = case_json(approver, linen.case_id)["proposals"][0]
    action_id = uuid.UUID(approve(approver, proposal))

    # A worker has locked the action and is marking it submitting, not yet committed.
    action = session.scalars(select(Action).where(Action.id == action_id).with_for_update()).one()
    action.status = ActionStatus.SUBMITTING
    session.flush()
    answers: list[object] = []
    edit = threading.Thread(
        target=lambda: answers.append(
            proposer.put(
                f"/api/proposals/{proposal['id']}",
                {
                    "kind": "refund",
                    "target": linen.payment_intent_id,
                    "amount": 4700,
                    "currency": "usd",
                    "line_items": [{"line_id": APRON_LINE, "amount": 4700}],
                },
            )
        )
    )
    edit.start()
    wait_for(
        lambda: _waiting_on_a_lock(session) or not edit.is_alive(),
        timeout=30,
        what="the edit to reach the worker's lock",
    )
    assert edit.is_alive(), "the edit must wait for the worker's lock"
    session.commit()
    edit.join(timeout=30)

    response = answers[0]
    assert response.status_code == 409  # type: ignore[attr-defined]
    assert response.get_json()["error"]["code"] == "already_executing"  # type: ignore[attr-defined]
    session.expire_all()
    assert session.get(Action, action_id).status == ActionStatus.SUBMITTING  # type: ignore[union-attr]


def _waiting_on_a_lock(session: Session) -> bool:
    """Whether some request of this database is blocked on a lock, read on a connection of
    its own (a transaction sees one unchanging snapshot of ``pg_stat_activity``)."""
    with session.get_bind().connect() as connection:
        waiting = connection.scalar(
            text(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE datname = current_database() AND wait_event_type = 'Lock'"
            )
        )
    return bool(waiting)
