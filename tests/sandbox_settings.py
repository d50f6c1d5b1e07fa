"""Settings for tests that talk to the Stripe sandbox fixture (``tests/conftest.py``)."""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any

from app.settings import Settings
from integrations.stripe.sandbox import StripeSandbox


def with_sandbox(settings: Settings, sandbox: StripeSandbox, **overrides: Any) -> Settings:
    """``settings`` pointed at ``sandbox``, on queues of the test's own (so no job of an
    earlier test can reach it), with ``overrides``."""
    assert sandbox.url is not None
    queue = f"caseward-test-{uuid.uuid4().hex[:8]}"
    return replace(
        settings,
        stripe_api_base=sandbox.url,
        queue_name=queue,
        background_queue_name=f"{queue}-background",
        **overrides,
    )
