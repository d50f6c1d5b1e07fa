"""The rows writers serialise on (``db.locked_row``): made when missing, held until the
transaction ends, so a second writer on the same thing waits while one on another thing
does not. SQLite has no row locks; this runs on PostgreSQL."""

from __future__ import annotations

import threading
import uuid

import pytest
from flask import Flask
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db import Database, locked_row
from app.execution.models import TargetLock
from app.shops.models import Shop

# Long enough that a writer which did not wait would have got through.
WAITED = 0.5


def _locking_in_another_session(app: Flask, shop_id: uuid.UUID, target: str) -> threading.Event:
    """Lock ``target`` of the shop's money from another thread and session; the event is
    set once the lock is held (that transaction then commits)."""
    held = threading.Event()

    def lock() -> None:
        with Database.state(app).session_factory() as other:
            locked_row(other, TargetLock, shop_id=shop_id, provider="money", target=target)
            held.set()
            other.commit()

    threading.Thread(target=lock, daemon=True).start()
    return held


def test_a_second_writer_on_the_same_money_waits_until_the_first_commits(
    app: Flask, session: Session, database: str
) -> None:
    if not database.startswith("postgresql"):
        pytest.skip("SQLite has no row locks")
    shop = Shop(domain="locks.myshopify.com", name="Locks")
    session.add(shop)
    session.commit()
    # The money was locked before (an earlier refund of it): its row is there already,
    # so only a lock on it, not the insert of a new one, can make the next writer wait.
    locked_row(session, TargetLock, shop_id=shop.id, provider="money", target="pi_same")
    session.commit()

    with Database.state(app).session_factory() as first:
        locked_row(first, TargetLock, shop_id=shop.id, provider="money", target="pi_same")
        same = _locking_in_another_session(app, shop.id, "pi_same")
        other = _locking_in_another_session(app, shop.id, "pi_other")
        assert other.wait(10), "a lock on other money waited"
        assert not same.wait(WAITED), "the second writer did not wait for the first"
        first.commit()
    assert same.wait(10)

    session.expire_all()
    rows = session.scalars(select(TargetLock.target).where(TargetLock.shop_id == shop.id))
    assert sorted(rows) == ["pi_other", "pi_same"]  # made once each, kept
