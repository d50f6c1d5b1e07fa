"""Webhook delivery machinery: a queue of deliveries worked off by one background thread.

Providers deliver webhooks at least once and in no guaranteed order, and the product must
cope with duplicates and reordering. An :class:`Outbox` therefore offers, besides normal
delivery with bounded retries, a pause switch and on-demand (re)delivery of anything, so
tests can stage duplicates and out-of-order arrival.

The provider supplies the one thing that differs: ``send(target, attempt, manual)``
performs one delivery attempt of ``target`` (a JSON description such as "event X to
endpoint Y") and returns a record with ``ok`` (and ``retry: False`` when trying again is
pointless). The sequence for each delivery: wait until due and not paused; send; log the
attempt; when it failed and retries remain, queue it again after the next retry delay
(real seconds, because receivers time out on real clocks). Manual sends are logged but
never retried. :func:`post` sends one signed delivery and reads its outcome, the same way
for every provider.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

JSON = dict[str, Any]
Send = Callable[[JSON, int, bool], JSON]


def post(url: str, body: bytes, headers: Mapping[str, str], timeout: float) -> JSON:
    """POST one delivery: ``{"status", "ok"}`` when the receiver answered (only a 2xx
    counts as received), ``{"error", "ok": False}`` when it could not be reached."""
    request = urllib.request.Request(  # noqa: S310 - addresses are http(s) by validation
        url, data=body, method="POST", headers=dict(headers)
    )
    outcome: JSON = {}
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            outcome["status"] = response.status
    except urllib.error.HTTPError as exc:
        outcome["status"] = exc.code
    except (OSError, ValueError) as exc:
        outcome["error"] = f"{type(exc).__name__}: {exc}"
    status = outcome.get("status")
    outcome["ok"] = isinstance(status, int) and 200 <= status < 300
    return outcome


@dataclass(order=True)
class _Delivery:
    due: float
    seq: int
    target: JSON = field(compare=False)
    attempt: int = field(compare=False, default=1)


class Outbox:
    """Deliveries waiting, in flight and attempted, for one sandbox."""

    def __init__(
        self,
        send: Send,
        *,
        retry_delays: Sequence[float],
        thread_name: str,
        log_size: int = 10_000,
    ) -> None:
        self._send = send
        self._retry_delays = tuple(retry_delays)
        self._thread_name = thread_name
        self._cond = threading.Condition()
        self._queue: list[_Delivery] = []
        self._seq = itertools.count()
        self._paused = False
        self._stopping = False
        self._busy = 0
        self._thread: threading.Thread | None = None
        self._log: deque[JSON] = deque(maxlen=log_size)

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Start the delivery thread (idempotent)."""
        with self._cond:
            if self._thread is not None:
                return
            self._stopping = False
            self._thread = threading.Thread(target=self._run, name=self._thread_name, daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop delivering; queued deliveries stay queued (and in snapshots)."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
            thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout=timeout)

    # -- queueing --------------------------------------------------------------------------

    def put(self, target: JSON, *, attempt: int = 1, delay: float = 0.0) -> None:
        """Queue one delivery of ``target``, due after ``delay`` real seconds."""
        with self._cond:
            heapq.heappush(
                self._queue,
                _Delivery(time.monotonic() + delay, next(self._seq), dict(target), attempt),
            )
            self._cond.notify_all()

    def pause(self) -> None:
        """Hold every delivery (queued ones wait until :meth:`resume`)."""
        with self._cond:
            self._paused = True

    def resume(self) -> None:
        """Deliver what was held, in the order it was queued."""
        with self._cond:
            self._paused = False
            self._cond.notify_all()

    @property
    def paused(self) -> bool:
        """Whether delivery is on hold."""
        return self._paused

    def pending(self) -> list[JSON]:
        """Queued deliveries, oldest first: each target with its attempt number."""
        with self._cond:
            return [{**d.target, "attempt": d.attempt} for d in sorted(self._queue)]

    def discard(self, matching: Callable[[JSON], bool] | None = None) -> int:
        """Drop queued deliveries (those whose target ``matching`` accepts, or all);
        returns how many."""
        with self._cond:
            before = len(self._queue)
            self._queue = [
                d for d in self._queue if matching is not None and not matching(d.target)
            ]
            heapq.heapify(self._queue)
            return before - len(self._queue)

    def attempts(self) -> list[JSON]:
        """Every delivery attempt so far, oldest first."""
        with self._cond:
            return list(self._log)

    def clear(self) -> None:
        """Forget the queue and the log."""
        with self._cond:
            self._queue.clear()
            self._log.clear()

    def idle(self) -> bool:
        """No delivery queued that could run now, and none in flight."""
        with self._cond:
            return self._busy == 0 and (self._paused or not self._queue)

    def wait_idle(self, timeout: float) -> bool:
        """Poll until :meth:`idle` (or ``timeout`` seconds); returns whether it is."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.idle():
                return True
            time.sleep(0.01)
        return self.idle()

    # -- delivery --------------------------------------------------------------------------

    def send_now(self, target: JSON) -> JSON:
        """Deliver ``target`` once, right now, whatever the queue holds (redelivery and
        out-of-order tests); logged, never retried."""
        return self._logged(self._attempt(target, 1, manual=True))

    def _attempt(self, target: JSON, attempt: int, *, manual: bool) -> JSON:
        try:
            return self._send(target, attempt, manual)
        except Exception as exc:  # a sandbox bug must not kill the delivery thread
            log.exception("%s: delivery of %s failed", self._thread_name, target)
            return {**target, "attempt": attempt, "manual": manual, "ok": False, "error": repr(exc)}

    def _run(self) -> None:
        while True:
            with self._cond:
                item = None
                while item is None:
                    if self._stopping:
                        return
                    now = time.monotonic()
                    if not self._paused and self._queue and self._queue[0].due <= now:
                        item = heapq.heappop(self._queue)
                        self._busy += 1
                        break
                    wait = None
                    if not self._paused and self._queue:
                        wait = max(self._queue[0].due - now, 0.0)
                    self._cond.wait(timeout=wait if wait is not None else 1.0)
            try:
                result = self._logged(self._attempt(item.target, item.attempt, manual=False))
                if (
                    not result["ok"]
                    and item.attempt <= len(self._retry_delays)
                    and result.get("retry", True)
                ):
                    self.put(
                        item.target,
                        attempt=item.attempt + 1,
                        delay=self._retry_delays[item.attempt - 1],
                    )
            finally:
                with self._cond:
                    self._busy -= 1
                    self._cond.notify_all()

    def _logged(self, record: JSON) -> JSON:
        with self._cond:
            self._log.append(record)
        return record
