"""The audit trail is append-only and tamper-evident, per shop."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from audit_tampering import intruder
from flask import Flask
from sent_statements import statements_sent
from sqlalchemy import delete, select, update
from sqlalchemy.exc import DatabaseError
from sqlalchemy.orm import Session

from app import audit
from app.actors import Surface, staff
from app.audit import AuditEvent, AuditHead, verify_chain
from app.shops.models import Shop

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def _shop(session: Session, domain: str) -> Shop:
    shop = Shop(domain=domain, name=domain.split(".", maxsplit=1)[0])
    session.add(shop)
    session.flush()
    return shop


def _record_three(session: Session, shop: Shop) -> None:
    for number in range(3):
        _record(session, shop, {"n": number}, T0 + timedelta(seconds=number))
    session.commit()


def _record(
    session: Session,
    shop: Shop,
    data: dict[str, object],
    now: datetime = T0,
    *,
    kind: str = "test.event",
    case_id: uuid.UUID | None = None,
    action_id: uuid.UUID | None = None,
) -> None:
    audit.record(
        session,
        shop_id=shop.id,
        kind=kind,
        actor=staff("alice", Surface.STAFF_API),
        data=data,
        case_id=case_id,
        action_id=action_id,
        now=now,
    )


def test_an_untouched_chain_verifies(session: Session) -> None:
    shop = _shop(session, "linen.myshopify.com")
    _record_three(session, shop)

    report = verify_chain(session, shop.id)

    assert report.intact
    assert report.events == 3


def test_editing_an_event_names_the_first_broken_link(session: Session) -> None:
    shop = _shop(session, "linen.myshopify.com")
    _record_three(session, shop)
    with intruder(session):
        session.execute(
            update(AuditEvent)
            .where(AuditEvent.shop_id == shop.id, AuditEvent.seq == 2)
            .values(data={"n": 99})
        )

    report = verify_chain(session, shop.id)

    assert (report.broken_at, report.problem) == (2, "content does not match its hash")


def test_deleting_the_last_event_is_detected(session: Session) -> None:
    shop = _shop(session, "linen.myshopify.com")
    _record_three(session, shop)
    with intruder(session):
        session.execute(
            delete(AuditEvent).where(AuditEvent.shop_id == shop.id, AuditEvent.seq == 3)
        )

    report = verify_chain(session, shop.id)

    assert not report.intact
    assert report.problem == "events after this one were removed"


def test_deleting_a_middle_event_is_detected(session: Session) -> None:
    shop = _shop(session, "linen.myshopify.com")
    _record_three(session, shop)
    with intruder(session):
        session.execute(
            delete(AuditEvent).where(AuditEvent.shop_id == shop.id, AuditEvent.seq == 2)
        )

    assert verify_chain(session, shop.id).broken_at == 2


def test_each_shop_has_its_own_chain(session: Session) -> None:
    linen = _shop(session, "linen.myshopify.com")
    other = _shop(session, "other.myshopify.com")
    _record_three(session, linen)
    _record_three(session, other)

    seqs = session.scalars(
        select(AuditEvent.seq).where(AuditEvent.shop_id == other.id).order_by(AuditEvent.seq)
    ).all()
    assert seqs == [1, 2, 3]
    assert verify_chain(session, linen.id).intact and verify_chain(session, other.id).intact


def test_card_numbers_and_keys_never_reach_the_trail(session: Session) -> None:
    shop = _shop(session, "linen.myshopify.com")
    event = audit.record(
        session,
        shop_id=shop.id,
        kind="test.event",
        actor=staff("alice", Surface.STAFF_API),
        data={"note": "card 4242 4242 4242 4242 and key rk_test_abcdefgh12345678"},
        now=T0,
    )
    session.commit()

    assert "4242 4242" not in str(event.data)
    assert "abcdefgh12345678" not in str(event.data)
    assert verify_chain(session, shop.id).intact


def test_cli_verifies_and_reports_a_break(app: Flask, session: Session) -> None:
    shop = _shop(session, "linen.myshopify.com")
    _record_three(session, shop)
    runner = app.test_cli_runner()

    ok = runner.invoke(args=["audit-verify", "--shop", "linen.myshopify.com"])
    assert ok.exit_code == 0 and "3 events, chain intact" in ok.output

    with intruder(session):
        session.execute(
            update(AuditEvent)
            .where(AuditEvent.shop_id == shop.id, AuditEvent.seq == 1)
            .values(actor="mallory")
        )
    broken = runner.invoke(args=["audit-verify", "--shop", "linen.myshopify.com"])
    assert broken.exit_code == 1
    assert "chain broken at event 1" in broken.output


@pytest.mark.parametrize("statement", ["update", "delete"])
def test_the_database_refuses_to_edit_or_delete_audit_events(
    session: Session, statement: str
) -> None:
    shop = _shop(session, "linen.myshopify.com")
    _record_three(session, shop)
    where = (AuditEvent.shop_id == shop.id, AuditEvent.seq == 2)
    change = (
        update(AuditEvent).where(*where).values(actor="mallory")
        if statement == "update"
        else delete(AuditEvent).where(*where)
    )

    with pytest.raises(DatabaseError, match="append-only"):
        session.execute(change)
        session.flush()
    session.rollback()

    assert verify_chain(session, shop.id).intact


def _note(session: Session, shop: Shop, note: str) -> None:
    _record(session, shop, {"note": note})


def _notes(session: Session, shop: Shop) -> list[str]:
    events = session.scalars(
        select(AuditEvent).where(AuditEvent.shop_id == shop.id).order_by(AuditEvent.seq)
    )
    return [event.data["note"] for event in events]


def test_a_transactions_events_are_chained_at_commit_under_one_lock_of_the_head(
    session: Session,
) -> None:
    shop = _shop(session, "linen.myshopify.com")
    _note(session, shop, "the shop's first event, which makes its head")
    session.commit()
    for note in ("first", "second", "third"):
        _note(session, shop, note)
    engine = session.get_bind()
    with statements_sent(engine) as sent:
        session.commit()
    statements = [s.statement for s in sent]

    # One locked read of the head, then the insert of the three events and the move of
    # the head: on PostgreSQL one statement (the move a data-modifying WITH), on SQLite
    # two (in either order: both are under the lock until the commit).
    touching = [s for s in statements if "audit_" in s]
    assert " ".join(touching[0].split()[:3]) == "SELECT audit_heads.shop_id, audit_heads.seq,"
    if engine.dialect.name == "postgresql":  # SQLite locks the whole file instead
        assert "FOR UPDATE" in touching[0]
        assert len(touching) == 2
        assert "UPDATE audit_heads" in touching[1] and "INSERT INTO audit_events" in touching[1]
    else:
        firsts = sorted(" ".join(s.split()[:3]) for s in touching[1:])
        assert firsts == ["INSERT INTO audit_events", "UPDATE audit_heads SET"]
    head = session.execute(select(AuditHead.seq).where(AuditHead.shop_id == shop.id)).scalar()
    assert head == 4
    assert _notes(session, shop)[1:] == ["first", "second", "third"]
    assert verify_chain(session, shop.id).intact


def test_events_written_together_come_back_exactly_as_recorded(session: Session) -> None:
    shop = _shop(session, "linen.myshopify.com")
    case_id, action_id = uuid.uuid4(), uuid.uuid4()
    awkward = {
        "note": 'Crème brûlée, "quoted", back\\slash, tab\t, 退款 and an emoji 🧾',
        "amounts": [4800, 0, -1],
        "nested": {"empty": {}, "none": None, "flag": True},
    }
    moment = datetime(2026, 11, 2, 9, 0, 0, 123456, tzinfo=UTC)
    _record(
        session,
        shop,
        awkward,
        moment,
        kind="refund.recorded",
        case_id=case_id,
        action_id=action_id,
    )
    _record(session, shop, {}, moment + timedelta(microseconds=1))
    session.commit()
    session.expire_all()

    first, second = session.scalars(
        select(AuditEvent).where(AuditEvent.shop_id == shop.id).order_by(AuditEvent.seq)
    )
    assert (first.kind, first.actor, first.actor_kind, first.actor_surface) == (
        "refund.recorded",
        "alice",
        "staff",
        "staff_api",
    )
    assert (first.case_id, first.action_id, first.data) == (case_id, action_id, awkward)
    assert first.created_at == moment
    assert (second.seq, second.prev_hash, second.data) == (2, first.hash, {})
    assert second.case_id is None and second.action_id is None
    assert verify_chain(session, shop.id).intact


def test_a_savepoint_rolled_back_forgets_its_events_and_the_rest_are_kept(
    session: Session,
) -> None:
    shop = _shop(session, "linen.myshopify.com")
    _note(session, shop, "before")
    with pytest.raises(RuntimeError), session.begin_nested():
        _note(session, shop, "inside, undone")
        raise RuntimeError("the work inside failed")
    with session.begin_nested():
        _note(session, shop, "inside, kept")
    _note(session, shop, "after")
    session.commit()

    assert _notes(session, shop) == ["before", "inside, kept", "after"]
    assert verify_chain(session, shop.id).intact


def test_a_transaction_rolled_back_leaves_nothing_for_the_next_one(session: Session) -> None:
    shop = _shop(session, "linen.myshopify.com")
    session.commit()
    _note(session, shop, "rolled back")
    session.rollback()
    _note(session, shop, "committed")
    session.commit()

    assert _notes(session, shop) == ["committed"]
    assert verify_chain(session, shop.id).events == 1


def test_a_transaction_reading_the_trail_sees_what_it_recorded(session: Session) -> None:
    shop = _shop(session, "linen.myshopify.com")
    _note(session, shop, "not committed yet")

    assert _notes(session, shop) == ["not committed yet"]
    session.rollback()
    assert _notes(session, shop) == []
