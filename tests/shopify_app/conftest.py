"""The app as a Shopify app: its client id and secret (see ``shopify_app_support``)."""

from __future__ import annotations

import sys
import uuid
from dataclasses import replace
from pathlib import Path

import pytest
from shopify_app_support import APP_SECRET, CLIENT_ID, ENCRYPTION_KEY

from app.settings import Settings

# Worker processes as the money-path tests start them (``money_path_harness``).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "money_path"))


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
