"""Sandbox time.

Provider behaviours that matter to the money path happen *later*: a card refund that
"succeeded" fails days afterwards, an access token expires after an hour, idempotency
keys are pruned after 24 hours, a rate-limit bucket refills. Tests cannot wait for any of
that, so every timestamp a sandbox writes or compares comes from a :class:`Clock` that a
test can move forward.

What a receiver checks against its *own* clock (a webhook signature's timestamp) is the
exception: each sandbox says where it signs with wall time instead.
"""

from __future__ import annotations

import threading
import time


class Clock:
    """Wall time plus an offset, or a frozen instant that only moves when advanced.

    ``Clock()`` follows the wall clock (the offline demo); ``Clock(start=...)`` is frozen
    at ``start`` unless ``frozen=False`` is given (tests). ``advance`` works in both modes,
    so "three days later" is one call either way.
    """

    def __init__(self, start: float | None = None, *, frozen: bool | None = None) -> None:
        self._lock = threading.Lock()
        self._frozen = (start is not None) if frozen is None else frozen
        self._offset = 0.0
        self._fixed = time.time() if start is None else float(start)
        if not self._frozen and start is not None:
            self._offset = float(start) - time.time()

    @property
    def frozen(self) -> bool:
        """Whether time stands still between calls to :meth:`advance`."""
        return self._frozen

    def now(self) -> float:
        """Current sandbox time in Unix seconds."""
        with self._lock:
            if self._frozen:
                return self._fixed
            return time.time() + self._offset

    def advance(self, seconds: float) -> float:
        """Move sandbox time forward (never backward) and return the new time."""
        if seconds < 0:
            raise ValueError("the sandbox clock only moves forward")
        with self._lock:
            if self._frozen:
                self._fixed += seconds
                return self._fixed
            self._offset += seconds
            return time.time() + self._offset

    def state(self) -> dict[str, float | bool]:
        """What a snapshot needs to bring the same time back after a restart."""
        return {"frozen": self._frozen, "now": self.now(), "offset": self._offset}

    def restore(self, state: dict[str, float | bool]) -> None:
        """Resume from :meth:`state`: a frozen clock resumes at its instant, a live one keeps
        its offset from wall time."""
        with self._lock:
            if self._frozen:
                self._fixed = max(self._fixed, float(state.get("now", self._fixed)))
            else:
                self._offset = max(self._offset, float(state.get("offset", 0.0)))
