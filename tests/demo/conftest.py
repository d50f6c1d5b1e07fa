"""The demo's seeder against the Stripe sandbox over HTTP and the app served for its webhooks,
on the demo's own store: SQLite, as ``make run`` uses, whatever DATABASE_URL names."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from own_database import own_database
from sandbox_settings import with_sandbox

from app.crypto import SecretBox
from app.migrations import upgrade
from app.settings import Settings
from integrations.stripe.sandbox import DEMO_PERMISSIONS, StripeSandbox


@dataclass(frozen=True)
class Account:
    secret_key: str
    restricted_key: str


@pytest.fixture(scope="session")
def migrated_sqlite_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('demo-db') / 'caseward.db'}"
    upgrade(url)
    return url


@pytest.fixture
def database(tmp_path: Path, migrated_sqlite_url: str) -> str:
    """A private copy of the demo's migrated SQLite store for each test."""
    return own_database(migrated_sqlite_url, tmp_path)


@pytest.fixture
def settings(settings: Settings, sandbox: StripeSandbox) -> Settings:
    return with_sandbox(settings, sandbox, encryption_keys=(SecretBox.generate_key(),))


@pytest.fixture
def account(sandbox: StripeSandbox) -> Account:
    keys = sandbox.create_account(restricted_keys=[{"permissions": DEMO_PERMISSIONS}])
    return Account(keys.secret_key, keys.restricted_keys[0].key)
