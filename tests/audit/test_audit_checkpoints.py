"""Signed checkpoints kept outside the database show events removed from the end of a
chain, even when the head row was rewound to make the rest look whole."""

from __future__ import annotations

import json
import stat
from datetime import timedelta
from pathlib import Path

from audit_support import (
    DOMAIN,
    KEY_2026,
    T0,
    AppWithKeys,
    make_shop,
    open_session,
    record_events,
    run,
)
from audit_tampering import cut_tail, reseal_without_key
from flask import Flask
from sqlalchemy.orm import Session

from app.audit import verify_chain
from app.audit_checkpoints import write_due_checkpoints
from app.settings import Settings
from app.shops.models import Shop

INTERVAL = timedelta(seconds=300)


def _checkpoint(session: Session, settings: Settings, minutes: int) -> list[Path]:
    return write_due_checkpoints(session, settings, T0 + timedelta(minutes=minutes))


def _shop_with_checkpoint(app: Flask, settings: Settings, events: int = 4) -> Shop:
    with open_session(app) as session:
        shop = make_shop(session)
        record_events(session, shop, events)
        assert len(_checkpoint(session, settings, 10)) == 1
    return shop


def test_checkpoints_are_written_when_the_head_moved_and_the_interval_passed(
    app: Flask, settings: Settings
) -> None:
    with open_session(app) as session:
        shop = make_shop(session)
        record_events(session, shop, 2)

        first = _checkpoint(session, settings, 0)
        record_events(session, shop, 1, start=2)
        too_soon = _checkpoint(session, settings, 2)
        second = _checkpoint(session, settings, 6)
        unmoved = _checkpoint(session, settings, 20)

    assert len(first) == 1 and too_soon == [] and len(second) == 1 and unmoved == []
    assert first[0].parent == settings.audit_checkpoint_dir / DOMAIN
    assert stat.S_IMODE(first[0].stat().st_mode) == 0o600
    written = json.loads(second[0].read_text())["checkpoint"]
    assert (written["shop_domain"], written["seq"]) == (DOMAIN, 3)
    assert settings.audit_checkpoint_interval_seconds == INTERVAL.total_seconds()


def test_a_cut_tail_with_the_head_rewound_is_found_against_the_checkpoint(
    app: Flask, settings: Settings
) -> None:
    shop = _shop_with_checkpoint(app, settings)
    with open_session(app) as session:
        cut_tail(session, shop.id, keep=2)
        # The rest is a whole chain: without a checkpoint nothing looks wrong.
        assert verify_chain(session, shop.id).intact

    result = run(app, "audit-verify", "--shop", DOMAIN)

    assert result.exit_code == 1
    assert (
        "chain broken at event 3: events after 2 were removed since the checkpoint of "
        "2026-11-02 09:10:00 UTC (which saw 4)" in result.output
    )


def test_a_cut_tail_regrown_past_the_checkpoint_is_found(app: Flask, settings: Settings) -> None:
    shop = _shop_with_checkpoint(app, settings)
    with open_session(app) as session:
        cut_tail(session, shop.id, keep=2)
        record_events(session, shop, 3, start=10)  # the app goes on writing: seq 3, 4, 5

        # Nor does the next checkpoint paper over the cut.
        assert _checkpoint(session, settings, 20) == []

    result = run(app, "audit-verify", "--shop", DOMAIN)

    assert result.exit_code == 1
    assert "chain broken at event 4: event 4 differs from the checkpoint of" in result.output


def test_a_chain_resealed_as_if_from_before_keyed_sealing_is_found(
    app: Flask, settings: Settings
) -> None:
    shop = _shop_with_checkpoint(app, settings, events=3)
    with open_session(app) as session:
        reseal_without_key(session, shop.id, edit={2: {"actor": "mallory"}}, drop_key_ids_from=1)
        assert verify_chain(session, shop.id).intact  # plain links, as old events have

    result = run(app, "audit-verify", "--shop", DOMAIN)

    assert result.exit_code == 1
    assert "chain broken at event 3: event 3 differs from the checkpoint of" in result.output


def test_an_untouched_chain_holds_its_checkpoint(app: Flask, settings: Settings) -> None:
    _shop_with_checkpoint(app, settings)

    result = run(app, "audit-verify", "--shop", DOMAIN)

    assert result.exit_code == 0, result.output
    assert "4 events, chain intact" in result.output
    assert "holds the checkpoint of 2026-11-02 09:10:00 UTC (event 4)" in result.output


def test_without_a_checkpoint_the_report_says_what_it_cannot_rule_out(app: Flask) -> None:
    with open_session(app) as session:
        record_events(session, make_shop(session), 2)

    result = run(app, "audit-verify", "--shop", DOMAIN)

    assert result.exit_code == 0, result.output
    assert "no checkpoint found" in result.output


def test_a_forged_checkpoint_is_refused(app: Flask, settings: Settings) -> None:
    shop = _shop_with_checkpoint(app, settings)
    with open_session(app) as session:
        cut_tail(session, shop.id, keep=2)
    (newest,) = (settings.audit_checkpoint_dir / DOMAIN).iterdir()
    # The intruder lowers the checkpoint to match the cut chain.
    document = json.loads(newest.read_text())
    document["checkpoint"]["seq"] = 2
    newest.write_text(json.dumps(document))

    result = run(app, "audit-verify", "--shop", DOMAIN)

    assert result.exit_code == 1
    assert "refused: its signature does not verify: forged or altered" in result.output


def test_a_checkpoint_signed_with_another_key_under_a_known_id_is_refused(
    app_with_keys: AppWithKeys, settings: Settings, tmp_path: Path
) -> None:
    real = app_with_keys(KEY_2026)
    impostor = app_with_keys("k2026:" + "m" * 40)  # same key id, the intruder's secret
    with open_session(real) as session:
        record_events(session, make_shop(session), 2)
    with open_session(impostor) as session:
        (forged,) = write_due_checkpoints(session, settings, T0)

    result = run(real, "audit-verify", "--shop", DOMAIN, "--checkpoint", str(forged))

    assert result.exit_code == 1
    assert "its signature does not verify" in result.output


def test_a_checkpoint_signed_with_an_unknown_key_is_refused(
    app_with_keys: AppWithKeys, settings: Settings
) -> None:
    other = app_with_keys("elsewhere:" + "e" * 40)
    with open_session(other) as session:
        record_events(session, make_shop(session), 1)
        (written,) = write_due_checkpoints(session, settings, T0)

    result = run(app_with_keys(KEY_2026, "elsewhere:" + "e" * 40), "audit-verify", "--shop", DOMAIN)
    assert result.exit_code == 0, result.output
    result = run(
        app_with_keys(KEY_2026), "audit-verify", "--shop", DOMAIN, "--checkpoint", str(written)
    )
    assert result.exit_code == 1
    assert "signed with audit key 'elsewhere', which is not configured" in result.output


def test_another_shops_checkpoint_is_refused(app: Flask, settings: Settings) -> None:
    with open_session(app) as session:
        other = make_shop(session, "other.myshopify.com")
        record_events(session, other, 1)
        (theirs,) = _checkpoint(session, settings, 0)
        record_events(session, make_shop(session), 1)

    result = run(app, "audit-verify", "--shop", DOMAIN, "--checkpoint", str(theirs))

    assert result.exit_code == 1
    assert "the checkpoint is for shop other.myshopify.com" in result.output
