"""Fixtures for the audit tests."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest
from audit_support import AppWithKeys
from flask import Flask

from app import create_app
from app.db import Database
from app.settings import Settings


@pytest.fixture
def app_with_keys(app: Flask, settings: Settings) -> Iterator[AppWithKeys]:
    """Another process of the same installation (same database and checkpoint folder),
    started with ``CASEWARD_AUDIT_KEYS`` set to the given entries."""
    started: list[Flask] = []

    def start(*keys: str) -> Flask:
        started.append(create_app(replace(settings, audit_keys=keys)))
        return started[-1]

    yield start
    for other in started:
        Database.state(other).engine.dispose()
