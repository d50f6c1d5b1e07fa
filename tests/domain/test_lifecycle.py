"""Status changes of actions, proposals and cases follow one table each, applied by one
function each: every allowed change lands with its audit event, every other change is
refused and leaves the row as it was."""

from __future__ import annotations

import itertools
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.actors import Surface, system_actor
from app.audit import AuditEvent
from app.cases.lifecycle import (
    CASE_MOVES,
    PROPOSAL_MOVES,
    IllegalTransition,
    move_case,
    move_proposal,
)
from app.cases.models import Case, CaseStatus
from app.cases.proposals import Proposal, ProposalStatus
from app.execution.lifecycle import ACTION_MOVES, move_action, provider_report_applies
from app.execution.models import Action, ActionStatus
from app.shops.models import Shop
from app.words import said

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
TEST_ACTOR = system_actor("test", Surface.CONSOLE)
A = ActionStatus
PROVIDER = {A.PENDING, A.REQUIRES_ACTION, A.SUCCEEDED, A.FAILED, A.CANCELED}


# ---------------------------------------------------------------- the tables themselves


def test_every_status_has_a_row() -> None:
    assert set(ACTION_MOVES) == set(ActionStatus)
    assert set(CASE_MOVES) == set(CaseStatus)
    assert set(PROPOSAL_MOVES) == {None, *ProposalStatus}


def test_provider_statuses_only_move_forward() -> None:
    order = {A.PENDING: 0, A.REQUIRES_ACTION: 0, A.SUCCEEDED: 1, A.FAILED: 2, A.CANCELED: 2}
    for current, reported in itertools.product(PROVIDER, PROVIDER):
        applies = provider_report_applies(current, reported)
        if order[reported] < order[current] or current == reported:
            assert not applies, f"{current} -> {reported}"
    assert provider_report_applies("succeeded", "failed")  # a refund failing days later
    assert not provider_report_applies("failed", "succeeded")  # a stale report


def test_nothing_leaves_a_final_status() -> None:
    for status in (A.HALTED, A.EXPIRED, A.REJECTED, A.CANNOT_RUN, A.FAILED, A.CANCELED):
        assert ACTION_MOVES[status] == frozenset()
    assert PROPOSAL_MOVES[ProposalStatus.REJECTED] == frozenset()


def test_an_action_that_may_have_been_sent_never_becomes_not_sent() -> None:
    # After an unclear send the first request may still land: only the provider's word
    # or a person's decision may follow, never "halted" or "expired".
    for status in (A.UNKNOWN, A.NEEDS_DECISION):
        assert not ACTION_MOVES[status] & {A.HALTED, A.EXPIRED, A.CANNOT_RUN, A.QUEUED}


# ---------------------------------------------------------------- applied to rows


@pytest.fixture
def rows(session: Session) -> tuple[Case, Proposal, Action]:
    shop = Shop(domain=f"{uuid.uuid4().hex[:8]}.myshopify.com", name="Lifecycle")
    session.add(shop)
    session.flush()
    case = Case(shop_id=shop.id, subject="A torn apron", status=CaseStatus.OPEN)
    session.add(case)
    session.flush()
    proposal = Proposal(
        shop_id=shop.id,
        case_id=case.id,
        kind="refund",
        provider="stripe",
        target="pi_1",
        proposed_by="pat",
        status=ProposalStatus.AWAITING_APPROVAL,
        verdict={},
        policy_version=0,
        digest="d" * 64,
    )
    session.add(proposal)
    session.flush()
    action = Action(
        shop_id=shop.id,
        case_id=case.id,
        proposal_id=proposal.id,
        proposal_revision=1,
        digest="d" * 64,
        kind="refund",
        provider="stripe",
        target="pi_1",
        idempotency_key=f"caseward-action-{uuid.uuid4()}",
        approval_expires_at=T0 + timedelta(days=1),
    )
    session.add(action)
    session.commit()
    return case, proposal, action


def _events(session: Session, kind: str) -> int:
    return len(session.scalars(select(AuditEvent).where(AuditEvent.kind == kind)).all())


@pytest.mark.parametrize(
    ("current", "to"), list(itertools.product(ActionStatus, ActionStatus)), ids=str
)
def test_every_action_transition_is_allowed_or_refused_by_the_table(
    current: ActionStatus, to: ActionStatus, session: Session, rows: tuple[Case, Proposal, Action]
) -> None:
    _, _, action = rows
    action.status = current  # the starting point, set directly for the test
    session.flush()
    before = _events(session, "action.test")

    if to in ACTION_MOVES[current]:
        move_action(session, action, to, event="action.test", actor=TEST_ACTOR, now=T0)
        assert action.status == to
        assert _events(session, "action.test") == before + 1
    else:
        with pytest.raises(IllegalTransition):
            move_action(session, action, to, event="action.test", actor=TEST_ACTOR, now=T0)
        assert action.status == current
        assert _events(session, "action.test") == before


@pytest.mark.parametrize(("current", "to"), list(itertools.product(CaseStatus, CaseStatus)))
def test_every_case_transition_is_allowed_or_refused_by_the_table(
    current: CaseStatus, to: CaseStatus, session: Session, rows: tuple[Case, Proposal, Action]
) -> None:
    case, _, _ = rows
    case.status = current
    session.flush()

    if to == current and to != CaseStatus.NEEDS_ATTENTION:
        move_case(session, case, to, actor=TEST_ACTOR, now=T0)  # staying put records nothing
        assert case.status == current
    elif to in CASE_MOVES[current]:
        move_case(session, case, to, actor=TEST_ACTOR, now=T0, owner="sam", reason=said("test"))
        assert case.status == to
    else:
        with pytest.raises(IllegalTransition):
            move_case(session, case, to, actor=TEST_ACTOR, now=T0, owner="sam")
        assert case.status == current


def test_needs_attention_always_names_an_owner(
    session: Session, rows: tuple[Case, Proposal, Action]
) -> None:
    case, _, _ = rows
    with pytest.raises(IllegalTransition):
        move_case(session, case, CaseStatus.NEEDS_ATTENTION, actor=TEST_ACTOR, now=T0)


@pytest.mark.parametrize(("current", "to"), list(itertools.product(ProposalStatus, ProposalStatus)))
def test_every_proposal_transition_is_allowed_or_refused_by_the_table(
    current: ProposalStatus,
    to: ProposalStatus,
    session: Session,
    rows: tuple[Case, Proposal, Action],
) -> None:
    _, proposal, _ = rows
    proposal.status = current
    session.flush()

    if to in PROPOSAL_MOVES[current]:
        move_proposal(session, proposal, to, event="proposal.test", actor=TEST_ACTOR, now=T0)
        assert proposal.status == to
    else:
        with pytest.raises(IllegalTransition):
            move_proposal(session, proposal, to, event="proposal.test", actor=TEST_ACTOR, now=T0)
        assert proposal.status == current


# ---------------------------------------------------------------- what the audit trail says


def _last(session: Session, kind: str) -> AuditEvent:
    events = session.scalars(
        select(AuditEvent).where(AuditEvent.kind == kind).order_by(AuditEvent.seq)
    ).all()
    return events[-1]


def test_an_action_move_is_on_record_with_both_statuses_and_the_callers_data(
    session: Session, rows: tuple[Case, Proposal, Action]
) -> None:
    case, _, action = rows
    action.status = A.SUBMITTING
    session.flush()

    move_action(
        session,
        action,
        A.SUCCEEDED,
        event="action.succeeded",
        actor=TEST_ACTOR,
        now=T0,
        data={"provider_ref": "re_1"},
    )

    event = _last(session, "action.succeeded")
    assert (event.shop_id, event.case_id, event.action_id) == (case.shop_id, case.id, action.id)
    assert event.actor == TEST_ACTOR.ref
    assert event.created_at == T0
    assert event.data == {"provider_ref": "re_1", "previous": "submitting", "status": "succeeded"}


def test_a_new_proposals_first_status_is_on_record_with_no_previous(
    session: Session, rows: tuple[Case, Proposal, Action]
) -> None:
    case, proposal, _ = rows
    proposal.status = None  # type: ignore[assignment]  (a proposal being created, not yet stored)

    move_proposal(
        session,
        proposal,
        ProposalStatus.BLOCKED,
        event="proposal.checked",
        actor=TEST_ACTOR,
        now=T0,
        data={"failed": 2},
    )

    event = _last(session, "proposal.checked")
    assert (event.shop_id, event.case_id, event.action_id) == (case.shop_id, case.id, None)
    assert event.created_at == T0
    assert event.data == {
        "failed": 2,
        "proposal_id": str(proposal.id),
        "previous": None,
        "status": "blocked",
    }


def test_a_proposal_move_names_its_previous_status(
    session: Session, rows: tuple[Case, Proposal, Action]
) -> None:
    _, proposal, _ = rows

    move_proposal(
        session,
        proposal,
        ProposalStatus.APPROVED,
        event="proposal.approved",
        actor=TEST_ACTOR,
        now=T0,
    )

    assert _last(session, "proposal.approved").data == {
        "proposal_id": str(proposal.id),
        "previous": "awaiting_approval",
        "status": "approved",
    }


def test_a_case_needing_attention_names_its_owner_reason_and_the_action(
    session: Session, rows: tuple[Case, Proposal, Action]
) -> None:
    case, _, action = rows
    action.status = A.UNKNOWN
    session.flush()

    move_case(
        session,
        case,
        CaseStatus.NEEDS_ATTENTION,
        actor=TEST_ACTOR,
        now=T0,
        owner="sam",
        reason=said("the refund may have been sent"),
        action=action,
    )

    assert (case.status, case.owner) == (CaseStatus.NEEDS_ATTENTION, "sam")
    event = _last(session, "case.needs_attention")
    assert (event.case_id, event.action_id, event.created_at) == (case.id, action.id, T0)
    assert event.data == {
        "previous": "open",
        "status": "needs_attention",
        "owner": "sam",
        "reason": "the refund may have been sent",
        "said": {"message": "the refund may have been sent", "values": {}},
        "action_status": "unknown",
    }


def test_a_new_problem_on_a_case_already_needing_attention_is_on_record_again(
    session: Session, rows: tuple[Case, Proposal, Action]
) -> None:
    case, _, _ = rows
    case.status = CaseStatus.NEEDS_ATTENTION
    case.owner = "sam"
    session.flush()

    move_case(
        session,
        case,
        CaseStatus.NEEDS_ATTENTION,
        actor=TEST_ACTOR,
        now=T0,
        owner="kim",
        reason=said("a dispute opened"),
    )

    assert case.owner == "kim"
    assert _last(session, "case.needs_attention").data == {
        "previous": "needs_attention",
        "status": "needs_attention",
        "owner": "kim",
        "reason": "a dispute opened",
        "said": {"message": "a dispute opened", "values": {}},
    }


def test_a_case_handed_to_a_person_without_a_reason_records_none_not_words(
    session: Session, rows: tuple[Case, Proposal, Action]
) -> None:
    case, _, _ = rows

    move_case(session, case, CaseStatus.NEEDS_ATTENTION, actor=TEST_ACTOR, now=T0, owner="kim")

    assert _last(session, "case.needs_attention").data == {
        "previous": "open",
        "status": "needs_attention",
        "owner": "kim",
        "reason": None,
    }


def test_an_ordinary_case_move_keeps_its_owner_and_records_a_status_change(
    session: Session, rows: tuple[Case, Proposal, Action]
) -> None:
    case, _, _ = rows
    case.owner = "sam"
    session.flush()
    before = _events(session, "case.status_changed")

    move_case(session, case, CaseStatus.EXECUTING, actor=TEST_ACTOR, now=T0)
    move_case(session, case, CaseStatus.EXECUTING, actor=TEST_ACTOR, now=T0)  # staying put

    assert (case.status, case.owner) == (CaseStatus.EXECUTING, "sam")
    assert _events(session, "case.status_changed") == before + 1
    event = _last(session, "case.status_changed")
    assert (event.case_id, event.action_id, event.created_at) == (case.id, None, T0)
    assert event.data == {"previous": "open", "status": "executing"}


def test_a_refused_move_names_the_row_and_both_statuses(
    session: Session, rows: tuple[Case, Proposal, Action]
) -> None:
    case, proposal, action = rows
    action.status = A.FAILED
    proposal.status = ProposalStatus.REJECTED
    session.flush()

    with pytest.raises(IllegalTransition, match=f"action {action.id}: failed -> succeeded"):
        move_action(session, action, A.SUCCEEDED, event="x", actor=TEST_ACTOR, now=T0)
    with pytest.raises(IllegalTransition, match=f"proposal {proposal.id}: rejected -> approved"):
        move_proposal(
            session, proposal, ProposalStatus.APPROVED, event="x", actor=TEST_ACTOR, now=T0
        )
    with pytest.raises(IllegalTransition, match=f"case {case.id}: open -> resolved"):
        move_case(session, case, CaseStatus.RESOLVED, actor=TEST_ACTOR, now=T0)
    with pytest.raises(IllegalTransition, match=f"case {case.id}: needs_attention needs a named"):
        move_case(session, case, CaseStatus.NEEDS_ATTENTION, actor=TEST_ACTOR, now=T0, owner="")
