"""Conversations: the app as a Shopify app (its secret signs the storefront proxy), on
queues of the test's own."""

from __future__ import annotations

import uuid
from dataclasses import replace

import pytest
from storefront_support import APP_SECRET, CLIENT_ID

from app.settings import Settings


@pytest.fixture
def settings(settings: Settings) -> Settings:
    queue = f"caseward-test-{uuid.uuid4().hex[:8]}"
    return replace(
        settings,
        shopify_api_key=CLIENT_ID,
        shopify_api_secret=APP_SECRET,
        queue_name=queue,
        background_queue_name=f"{queue}-background",
    )
