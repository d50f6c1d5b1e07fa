"""What the money executor announces to the areas above it.

The executor knows nothing of approvals or conversations (ARCHITECTURE.md, the layers).
When something it recorded matters to them, it sends a signal (blinker's, as Flask's
own signals are) inside the caller's transaction, and the area that cares connected its
receiver when its module was imported:

* :data:`approval_expired`: an approved action's approval lapsed before anything was
  sent; the action is ``expired``. Sent with ``session``, ``proposal`` and ``now``.
  :mod:`app.approvals.service` sends the proposal back for approval.
* :data:`status_moved`: the provider's word moved an action's status. Sent with
  ``session``, ``case`` and ``now``. :mod:`app.conversations.updates` tells the customer.
* :data:`brake_tripped`: the shop's brake tripped on this action (its send would pass a
  ceiling, or its answer tripped the breaker); sending is paused. Sent with ``session``,
  ``reason`` (a :class:`~app.words.Sentence`) and ``now``. :mod:`app.alerts` tells the owner.
* :data:`unclear_too_long`: the action's outcome is still unclear past its attention time
  (the sweep's escalation). Sent with ``session`` and ``now``. :mod:`app.alerts` tells the
  owner.
* :data:`refund_failed_after_told`: a refund the provider had taken (and the customer been
  told of) failed or was canceled. Sent with ``session`` and ``now``. :mod:`app.alerts`
  tells the owner.

An announcement nobody hears is an error, not a quiet no-op: a process that never
loaded the area (:mod:`app.background` and the app factory load them all) fails the
job, and its transaction with it, rather than leave a proposal approved with nothing left
to run, a customer untold, or an owner not told that sending stopped.
"""

from __future__ import annotations

from typing import Any

from blinker import NamedSignal, Namespace

from app.execution.models import Action

_signals = Namespace()

approval_expired = _signals.signal("approval-expired")
status_moved = _signals.signal("status-moved")
brake_tripped = _signals.signal("brake-tripped")
unclear_too_long = _signals.signal("unclear-too-long")
refund_failed_after_told = _signals.signal("refund-failed-after-told")


class Unheard(RuntimeError):
    """A signal was sent with no receiver connected: an area was not loaded."""


def announce(signal: NamedSignal, action: Action, **facts: Any) -> None:
    """Send ``signal`` about ``action`` to every receiver, which act in the caller's
    transaction."""
    if not signal.receivers:
        raise Unheard(f"no receiver for {signal.name!r}: is its area imported?")
    signal.send(action, **facts)
