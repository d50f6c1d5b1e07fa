"""Time, in one place, so tests and the sandbox clock can move it."""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    return datetime.now(UTC)
