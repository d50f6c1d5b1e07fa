"""Shared pieces for the audit tests: shops with events, apps with chosen audit keys."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from click.testing import Result
from flask import Flask
from sqlalchemy.orm import Session

from app import audit
from app.actors import Surface, staff
from app.db import Database
from app.shops.models import Shop

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
DOMAIN = "linen.myshopify.com"
KEY_2026 = "k2026:" + "s" * 40
KEY_2027 = "k2027:" + "t" * 40

AppWithKeys = Callable[..., Flask]


def open_session(app: Flask) -> Session:
    return Database.state(app).session_factory()


def make_shop(session: Session, domain: str = DOMAIN) -> Shop:
    shop = Shop(domain=domain, name=domain.split(".", maxsplit=1)[0])
    session.add(shop)
    session.commit()
    return shop


def record_events(session: Session, shop: Shop, count: int, *, start: int = 0) -> None:
    for number in range(start, start + count):
        audit.record(
            session,
            shop_id=shop.id,
            kind="test.event",
            actor=staff("alice", Surface.STAFF_API),
            data={"n": number},
            now=T0 + timedelta(seconds=number),
        )
    session.commit()


def run(app: Flask, *args: str) -> Result:
    return app.test_cli_runner().invoke(args=list(args))
