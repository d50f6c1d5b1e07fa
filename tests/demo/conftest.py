"""The demo's seeder against the Stripe sandbox over HTTP and the app served for its webhooks."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from sandbox_settings import with_sandbox

from app.crypto import SecretBox
from app.settings import Settings
from integrations.stripe.sandbox import DEMO_PERMISSIONS, StripeSandbox


@dataclass(frozen=True)
class Account:
    secret_key: str
    restricted_key: str


@pytest.fixture
def settings(settings: Settings, sandbox: StripeSandbox) -> Settings:
    return with_sandbox(settings, sandbox, encryption_keys=(SecretBox.generate_key(),))


@pytest.fixture
def account(sandbox: StripeSandbox) -> Account:
    keys = sandbox.create_account(restricted_keys=[{"permissions": DEMO_PERMISSIONS}])
    return Account(keys.secret_key, keys.restricted_keys[0].key)
