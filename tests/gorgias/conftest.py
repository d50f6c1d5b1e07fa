"""Fixtures for the Gorgias tests: one served sandbox per module on a frozen clock, emptied
and given the demo account (Maya's ticket about the torn apron) before each test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from gorgias_support import START, FakeTime

from integrations.gorgias.sandbox import Clock, DemoAccount, GorgiasSandbox, seed_demo_account


@pytest.fixture(scope="module")
def served() -> Iterator[GorgiasSandbox]:
    """The module's sandbox, serving on a free port; integrations are not retried."""
    box = GorgiasSandbox(
        clock=Clock(start=START), integration_retry_delays=(), integration_timeout=5.0
    )
    box.start()
    yield box
    box.stop()


@pytest.fixture
def sandbox(served: GorgiasSandbox) -> Iterator[GorgiasSandbox]:
    """The module's sandbox with nothing in it."""
    served.reset()
    yield served
    served.reset()


@pytest.fixture
def demo(sandbox: GorgiasSandbox) -> DemoAccount:
    """The demo account and its ticket."""
    return seed_demo_account(sandbox)


@pytest.fixture
def fake(sandbox: GorgiasSandbox) -> FakeTime:
    return FakeTime(sandbox)
