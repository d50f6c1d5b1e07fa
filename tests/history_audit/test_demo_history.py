"""The demo's history check: ``make run`` writes the linen shop's past into the Stripe
sandbox with a few problems planted, and the check started over it finds each of them."""

from __future__ import annotations

from collections import Counter

import pytest
from flask import Flask
from history_scan_support import scan_context
from sandbox_settings import with_sandbox
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.crypto import SecretBox, secret_box
from app.demo import DEMO_HISTORY_COUNTS, check_demo_history, seed_linen_shop
from app.history_audit.findings import Rule
from app.history_audit.models import HistoryFinding, HistoryScan, ScanStatus
from app.history_audit.scan import run_scan
from app.settings import Settings
from integrations.stripe.sandbox import DEMO_PERMISSIONS, StripeSandbox

ENCRYPTION_KEY = SecretBox.generate_key()


@pytest.fixture
def settings(settings: Settings, sandbox: StripeSandbox) -> Settings:
    return with_sandbox(settings, sandbox, encryption_keys=(ENCRYPTION_KEY,))


def test_the_demos_history_check_finds_each_planted_problem_and_runs_once(
    app: Flask, settings: Settings, session: Session, sandbox: StripeSandbox, web_url: str
) -> None:
    keys = sandbox.create_account(restricted_keys=[{"permissions": DEMO_PERMISSIONS}])
    seed_linen_shop(
        session,
        settings=settings,
        box=secret_box(settings),
        secret_key=keys.secret_key,
        restricted_key=keys.restricted_keys[0].key,
        webhook_base_url=web_url,
    )
    session.commit()
    queued: list[HistoryScan] = []

    def check() -> bool:
        return check_demo_history(
            session,
            settings=settings,
            control_token=sandbox.control_token,
            enqueue=queued.append,
            account=keys.id,
        )

    assert check()
    [scan] = queued
    assert run_scan(scan_context(app, settings), scan.id) == ScanStatus.DONE

    found = Counter(
        session.scalars(select(HistoryFinding.rule).where(HistoryFinding.scan_id == scan.id))
    )
    assert found[Rule.DUPLICATE] == 1  # the $35.00 refunded twice within the hour
    assert found[Rule.DISPUTED_REFUND] == 1
    assert found[Rule.LARGE_DISCOUNT] == 1  # FRIENDS60, above the policy's 50%
    # Before Caseward nothing was guarded: every record is one, and nothing else is found.
    records = sum(DEMO_HISTORY_COUNTS.values()) + 4
    assert found[Rule.UNGUARDED] == records
    assert set(found) == {Rule.DUPLICATE, Rule.DISPUTED_REFUND, Rule.LARGE_DISCOUNT, Rule.UNGUARDED}
    # A second start of the demo keeps the report it has and seeds nothing more.
    assert not check() and queued == [scan]
