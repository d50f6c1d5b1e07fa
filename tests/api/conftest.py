"""The staff API against real services: PostgreSQL (or SQLite), Redis, the Stripe sandbox
over HTTP, and the app served over HTTP where a provider must reach it."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from api_support import Account, Staff, new_account, seed
from flask import Flask
from flask.testing import FlaskClient
from sandbox_settings import with_sandbox
from sqlalchemy.orm import Session

from app.crypto import SecretBox
from app.demo import APPROVER, OWNER, PROPOSER, SHOP_DOMAIN, LinenShop
from app.settings import Settings
from integrations.gorgias.sandbox import GorgiasSandbox
from integrations.stripe.sandbox import StripeSandbox

ENCRYPTION_KEY = SecretBox.generate_key()


@pytest.fixture(scope="session")
def gorgias() -> Iterator[GorgiasSandbox]:
    """Gorgias for the API's tests: any credentials the fuzzer makes up are refused there."""
    box = GorgiasSandbox()
    box.start()
    yield box
    box.stop()


@pytest.fixture
def settings(settings: Settings, sandbox: StripeSandbox, gorgias: GorgiasSandbox) -> Settings:
    return with_sandbox(
        settings,
        sandbox,
        encryption_keys=(ENCRYPTION_KEY,),
        provider_timeout_seconds=5.0,
        gorgias_api_base=gorgias.url,
    )


@pytest.fixture
def account(sandbox: StripeSandbox, settings: Settings) -> Account:
    return new_account(sandbox, settings)


@pytest.fixture
def linen(settings: Settings, account: Account, session: Session) -> LinenShop:
    return seed(session, settings, account)


@pytest.fixture
def staff(client: FlaskClient, app: Flask) -> Callable[[str, str], Staff]:
    """The staff API as ``user_id`` of the shop at ``domain`` sees it."""
    return lambda user_id, domain=SHOP_DOMAIN: Staff(client, app, domain, user_id)


@pytest.fixture
def owner(staff: Callable[[str], Staff]) -> Staff:
    return staff(OWNER)


@pytest.fixture
def approver(staff: Callable[[str], Staff]) -> Staff:
    return staff(APPROVER)


@pytest.fixture
def proposer(staff: Callable[[str], Staff]) -> Staff:
    return staff(PROPOSER)
