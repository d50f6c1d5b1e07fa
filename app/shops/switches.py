"""Whether a shop lets anything reach its provider now: its switches read in one place.

Three states of a shop stop every write, each reported when it holds, in this order:

1. uninstalled: the merchant removed the app, so nothing more is sent for the shop;
2. the kill switch is on: someone stopped everything at once;
3. protection mode: writes are not turned on (a new shop starts so).

Two callers read them, each for its own moment and in its own words: the executor stops
an already approved action on the first, right before sending
(:func:`app.execution.executor._stopped_before_checks`), and a person's approval is
refused on any of them (:func:`app.approvals.may_approve.why_not_approvable`), since what
they approved then could not be sent.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Protocol


class WriteStop(StrEnum):
    UNINSTALLED = "uninstalled"
    KILL_SWITCH = "kill_switch"
    PROTECTION_MODE = "protection_mode"


class Switched(Protocol):
    """A shop's switches: a :class:`~app.shops.models.Shop`, or plain values in tests."""

    uninstalled_at: datetime | None
    kill_switch: bool
    writes_enabled: bool


def writes_stopped(shop: Switched) -> list[WriteStop]:
    """Every state of ``shop`` that stops writes now, in the order above; none: writes go."""
    stops = []
    if shop.uninstalled_at is not None:
        stops.append(WriteStop.UNINSTALLED)
    if shop.kill_switch:
        stops.append(WriteStop.KILL_SWITCH)
    if not shop.writes_enabled:
        stops.append(WriteStop.PROTECTION_MODE)
    return stops
