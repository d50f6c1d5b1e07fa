"""The chain is sealed with audit keys kept outside the database: someone who can
write to the database but lacks the key cannot rewrite it unnoticed."""

from __future__ import annotations

import stat
from dataclasses import replace
from pathlib import Path

import pytest
from audit_support import (
    DOMAIN,
    KEY_2026,
    KEY_2027,
    AppWithKeys,
    make_shop,
    open_session,
    record_events,
    run,
)
from audit_tampering import reseal_without_key
from flask import Flask
from sent_statements import statements_sent
from sqlalchemy import select

from app import create_app
from app.audit import AuditEvent, audit_key_ring, parse_audit_keys, verify_chain
from app.db import Database
from app.settings import Settings, SettingsError


def _key_ids(app: Flask, shop_id: object) -> list[str | None]:
    with open_session(app) as session:
        return list(
            session.scalars(
                select(AuditEvent.key_id)
                .where(AuditEvent.shop_id == shop_id)
                .order_by(AuditEvent.seq)
            )
        )


def test_an_edit_resealed_with_plain_sha256_is_found(app: Flask) -> None:
    with open_session(app) as session:
        shop = make_shop(session)
        record_events(session, shop, 3)
        reseal_without_key(session, shop.id, edit={2: {"data": {"n": 99}}})

        report = verify_chain(session, shop.id)

    assert (report.broken_at, report.problem) == (2, "content does not match its hash")
    broken = run(app, "audit-verify", "--shop", DOMAIN)
    assert broken.exit_code == 1
    assert "chain broken at event 2: content does not match its hash" in broken.output


def test_an_edit_posing_as_events_from_before_keyed_sealing_is_found(app: Flask) -> None:
    with open_session(app) as session:
        shop = make_shop(session)
        record_events(session, shop, 3)
        reseal_without_key(session, shop.id, edit={2: {"actor": "mallory"}}, drop_key_ids_from=2)

        report = verify_chain(session, shop.id)

    assert report.broken_at == 2
    assert report.problem == "has no audit key id, though event 1 was keyed"


def test_new_events_are_sealed_with_the_newest_key_and_old_ones_still_verify(
    app_with_keys: AppWithKeys,
) -> None:
    before = app_with_keys(KEY_2026)
    with open_session(before) as session:
        shop = make_shop(session)
        record_events(session, shop, 2)

    rotated = app_with_keys(KEY_2027, KEY_2026)  # the new key first, the old one kept
    with open_session(rotated) as session:
        record_events(session, shop, 2, start=2)
        report = verify_chain(session, shop.id)

    assert report.intact and report.events == 4
    assert _key_ids(rotated, shop.id) == ["k2026", "k2026", "k2027", "k2027"]
    result = run(rotated, "audit-verify", "--shop", DOMAIN)
    assert result.exit_code == 0, result.output
    assert "4 events, chain intact" in result.output


def test_an_event_sealed_with_a_key_nobody_configured_is_refused(
    app_with_keys: AppWithKeys,
) -> None:
    old = app_with_keys(KEY_2026)
    with open_session(old) as session:
        shop = make_shop(session)
        record_events(session, shop, 2)

    dropped_old_key = app_with_keys(KEY_2027)
    result = run(dropped_old_key, "audit-verify", "--shop", DOMAIN)

    assert result.exit_code == 1
    assert "chain broken at event 1" in result.output
    assert "audit key 'k2026', which is not configured" in result.output


def test_events_from_before_keyed_sealing_verify_and_the_chain_continues_keyed(
    app: Flask,
) -> None:
    with open_session(app) as session:
        shop = make_shop(session)
        record_events(session, shop, 2)
        # Turn them into what the previous release wrote: plain SHA-256, no key id.
        reseal_without_key(session, shop.id, edit={}, drop_key_ids_from=1)
        record_events(session, shop, 2, start=2)

        report = verify_chain(session, shop.id)

    assert report.intact and report.events == 4 and report.unkeyed == 2
    current = app.extensions["caseward.audit_keys"].current_id
    assert _key_ids(app, shop.id) == [None, None, current, current]
    result = run(app, "audit-verify", "--shop", DOMAIN)
    assert result.exit_code == 0, result.output
    assert "events 1-2 predate keyed sealing" in result.output


def test_the_embedded_default_generates_one_private_key_and_keeps_it(
    app: Flask, settings: Settings
) -> None:
    key_file = settings.instance_path / "audit_key"

    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    again = create_app(settings)
    try:
        assert again.extensions["caseward.audit_keys"] == app.extensions["caseward.audit_keys"]
    finally:
        Database.state(again).engine.dispose()


def test_production_without_audit_keys_is_refused(tmp_path: Path) -> None:
    settings = Settings(instance_path=tmp_path, environment="production")

    with pytest.raises(SettingsError, match="CASEWARD_AUDIT_KEYS"):
        audit_key_ring(settings)
    assert not (tmp_path / "audit_key").exists()


@pytest.mark.parametrize(
    ("entry", "complaint"),
    [
        ("no-separator" + "x" * 40, "must be 'key_id:secret'"),
        ("bad id!:" + "x" * 40, "key id 'bad id!'"),
        ("k" * 33 + ":" + "x" * 40, "1-32 letters"),
        ("short:tooshort", "at least 32 characters"),
    ],
)
def test_malformed_audit_keys_are_refused_naming_the_variable(entry: str, complaint: str) -> None:
    with pytest.raises(SettingsError, match="CASEWARD_AUDIT_KEYS") as refused:
        parse_audit_keys([entry])
    assert complaint in str(refused.value)


def test_a_key_id_given_twice_is_refused() -> None:
    with pytest.raises(SettingsError, match="names key 'k2026' twice"):
        parse_audit_keys([KEY_2026, KEY_2026])


def test_keys_come_from_the_environment_newest_first(tmp_path: Path) -> None:
    settings = Settings.from_env(
        {"CASEWARD_INSTANCE_PATH": str(tmp_path), "CASEWARD_AUDIT_KEYS": f"{KEY_2027},{KEY_2026}"}
    )

    keys = audit_key_ring(replace(settings, environment="production"))

    assert keys.current_id == "k2027" and keys.knows("k2026")
    assert "s" * 40 not in repr(keys) and "t" * 40 not in repr(keys)


def test_sealing_adds_no_statement_to_the_money_transaction(app: Flask) -> None:
    """Lock the head, then insert the event and move the head in one statement."""
    engine = Database.state(app).engine
    if engine.dialect.name != "postgresql":
        pytest.skip("statement count is PostgreSQL's (SQLite reads the head separately)")
    with open_session(app) as session:
        shop = make_shop(session)
        record_events(session, shop, 1)
        with statements_sent(engine) as sent:
            record_events(session, shop, 1, start=1)

    statements = [s.statement for s in sent]
    assert len([s for s in statements if "audit_" in s]) == 2, statements
