"""The what-if as a merchant meets it: the staff API and the admin's policy page, as the
Shopify app (its client id and secret, as in ``tests/shopify_app``)."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

from app.settings import Settings

# The admin's pages and API calls as ``tests/shopify_app`` makes them.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shopify_app"))
from shopify_app_support import APP_SECRET, CLIENT_ID, ENCRYPTION_KEY


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return replace(
        settings,
        shopify_api_key=CLIENT_ID,
        shopify_api_secret=APP_SECRET,
        encryption_keys=(ENCRYPTION_KEY,),
    )
