"""The app as a Shopify app: its client id and secret (see ``shopify_app_support``)."""

from __future__ import annotations

import uuid
from dataclasses import replace

import pytest
from shopify_app_support import APP_SECRET, CLIENT_ID, ENCRYPTION_KEY

from app.settings import Settings


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return replace(
        settings,
        shopify_api_key=CLIENT_ID,
        shopify_api_secret=APP_SECRET,
        encryption_keys=(ENCRYPTION_KEY,),
        # Queued privacy work of this test only.
        background_queue_name=f"caseward-test-background-{uuid.uuid4().hex[:8]}",
    )
