"""The what-if in the demo: over the linen shop's past at Stripe (as ``make run`` seeds it
and the history check reads it) and Maya's refund, the rules the demo suggests would have
blocked some, sent some to people and approved some by themselves."""

from __future__ import annotations

import pytest
from flask import Flask
from sandbox_settings import with_sandbox
from sqlalchemy.orm import Session

from app.clock import utcnow
from app.crypto import SecretBox, secret_box
from app.db import Database
from app.demo import AS_OWNER, WHAT_IF_EXAMPLE, check_demo_history, seed_linen_shop
from app.history_audit.models import HistoryScan, ScanStatus
from app.history_audit.readers import history_readers
from app.history_audit.scan import ScanContext, run_scan
from app.settings import Settings
from app.shops.policy_form import form_fields, rules_from_form
from app.shops.service import current_policy
from app.whatif import Change, what_if
from integrations.stripe.sandbox import DEMO_PERMISSIONS, StripeSandbox


@pytest.fixture
def settings(settings: Settings, sandbox: StripeSandbox) -> Settings:
    return with_sandbox(settings, sandbox, encryption_keys=(SecretBox.generate_key(),))


def test_the_demos_suggested_rules_change_something_in_each_class(
    app: Flask, settings: Settings, session: Session, sandbox: StripeSandbox, web_url: str
) -> None:
    keys = sandbox.create_account(restricted_keys=[{"permissions": DEMO_PERMISSIONS}])
    linen = seed_linen_shop(
        session,
        settings=settings,
        box=secret_box(settings),
        secret_key=keys.secret_key,
        restricted_key=keys.restricted_keys[0].key,
        webhook_base_url=web_url,
    )
    session.commit()
    queued: list[HistoryScan] = []
    check_demo_history(
        session,
        settings=settings,
        control_token=sandbox.control_token,
        enqueue=queued.append,
        account=keys.id,
    )
    [scan] = queued
    context = ScanContext(
        session_factory=Database.state(app).session_factory,
        readers=history_readers(settings, secret_box(settings)),
        clock=utcnow,
    )
    assert run_scan(context, scan.id) == ScanStatus.DONE
    current = current_policy(session, linen.shop_id)
    fields = form_fields(current, "usd") | WHAT_IF_EXAMPLE

    result = what_if(
        session,
        shop_id=linen.shop_id,
        actor=AS_OWNER,
        rules=rules_from_form(fields, current),
        now=utcnow(),
    )

    assert all(result.counts[change] > 0 for change in Change), result.counts
    blocked = [done for done in result.items if done.change is Change.WOULD_BLOCK]
    assert linen.case_id in {done.item.case_id for done in blocked}  # Maya's $48.00 refund
    assert result.reconstructed == result.replayed - 1
