"""``flask audit-export`` hands over a shop's events with a signed checkpoint of their
head, which later shows whether the database still holds everything exported."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from audit_support import DOMAIN, make_shop, open_session, record_events, run
from audit_tampering import cut_tail
from flask import Flask

from app.settings import Settings


def test_the_export_holds_every_event_and_a_checkpoint_of_its_head(
    app: Flask, settings: Settings, tmp_path: Path
) -> None:
    with open_session(app) as session:
        record_events(session, make_shop(session), 3)
    out = tmp_path / "exports" / "linen.jsonl"

    result = run(app, "audit-export", "--shop", DOMAIN, "--out", str(out))

    assert result.exit_code == 0, result.output
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    *events, checkpoint = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(e["seq"], e["data"]) for e in events] == [(1, {"n": 0}), (2, {"n": 1}), (3, {"n": 2})]
    assert checkpoint["checkpoint"]["seq"] == 3
    assert checkpoint["checkpoint"]["head_hash"] == events[-1]["hash"]
    # The same checkpoint is kept beside the others, outside the database.
    (kept,) = (settings.audit_checkpoint_dir / DOMAIN).iterdir()
    assert json.loads(kept.read_text()) == checkpoint


def test_an_export_shows_events_removed_after_it(app: Flask, tmp_path: Path) -> None:
    with open_session(app) as session:
        shop = make_shop(session)
        record_events(session, shop, 3)
    out = tmp_path / "linen.jsonl"
    assert run(app, "audit-export", "--shop", DOMAIN, "--out", str(out)).exit_code == 0
    assert run(app, "audit-verify", "--shop", DOMAIN, "--checkpoint", str(out)).exit_code == 0

    with open_session(app) as session:
        cut_tail(session, shop.id, keep=1)
    result = run(app, "audit-verify", "--shop", DOMAIN, "--checkpoint", str(out))

    assert result.exit_code == 1
    assert "chain broken at event 2: events after 1 were removed" in result.output


def test_the_export_goes_to_standard_output_and_never_over_a_file(
    app: Flask, tmp_path: Path
) -> None:
    with open_session(app) as session:
        record_events(session, make_shop(session), 2)
    existing = tmp_path / "earlier.jsonl"
    existing.write_text("kept\n")

    printed = run(app, "audit-export", "--shop", DOMAIN)
    refused = run(app, "audit-export", "--shop", DOMAIN, "--out", str(existing))

    assert printed.exit_code == 0
    lines = [json.loads(line) for line in printed.stdout.splitlines()]
    assert [line.get("seq") for line in lines[:2]] == [1, 2] and "checkpoint" in lines[2]
    assert refused.exit_code != 0 and "not overwriting" in refused.output
    assert existing.read_text() == "kept\n"
