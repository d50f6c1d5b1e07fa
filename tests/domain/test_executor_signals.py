"""The money executor reaches the areas above it only by its signals: each has its
receiver once the areas are loaded, and a signal nobody hears fails instead of passing
silently."""

from __future__ import annotations

import uuid

import pytest
from blinker import Namespace

import app.areas  # noqa: F401  (what every process loads)
from app.approvals.service import reopen_after_expiry
from app.conversations import updates
from app.execution.events import Unheard, announce, approval_expired, status_moved
from app.execution.models import Action


def test_each_signal_has_the_receiver_of_the_area_that_acts_on_it() -> None:
    assert list(approval_expired.receivers_for(object())) == [reopen_after_expiry]
    heard = [receiver.__module__ for receiver in status_moved.receivers_for(object())]
    assert heard == [updates.__name__]


def test_a_signal_nobody_hears_fails_rather_than_passing_silently() -> None:
    unheard = Namespace().signal("nobody-listens")

    with pytest.raises(Unheard, match="nobody-listens"):
        announce(unheard, Action(id=uuid.uuid4()), now=None)
