"""What every provider sandbox object does the same way, written once.

A provider's sandbox class (``StripeSandbox``, ``ShopifySandbox``) derives from
:class:`SandboxBase` and supplies only what is its own: how an API request is served, its
control routes, its answer when it fails itself, its due work and its webhook dispatcher.
The base holds the rest: the clock, the fault board, the received-request log, the
control token, serving over HTTP beside a ticker, and the test controls for time, faults,
holds, latency, the request log and webhook delivery.

The sequence of a served sandbox: :meth:`SandboxBase.start` builds a
:class:`~.server.Serving` from the provider's parts (at start, not construction, so a
test that wraps ``handle_api`` is served), binds it, starts webhook delivery and returns
a :class:`~.server.SandboxHandle`; :meth:`SandboxBase.stop` stops serving, the ticker and
webhook delivery (a provider adds what it does on the way out, such as a snapshot).
:func:`control_router` gives a sandbox the ``/_sandbox/`` routes mirroring those shared
controls, to which the provider adds its own.
"""

from __future__ import annotations

import secrets
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Protocol

from .clock import Clock
from .control import ControlRouter
from .faults import Fault, FaultBoard, HoldState
from .received import ReceivedRequest, RequestLog
from .server import Dispatch, Response, SandboxHandle, Serving

JSON = dict[str, Any]


class Deliveries(Protocol):
    """A sandbox's webhook dispatcher, as the shared controls drive it."""

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def pause(self) -> None: ...

    def resume(self) -> None: ...

    def pending(self) -> list[JSON]: ...

    def discard(self, event_id: str | None = None) -> int: ...

    def attempts(self) -> list[JSON]: ...

    def wait_idle(self, timeout: float) -> bool: ...


class NoDeliveries:
    """The dispatcher of a provider that sends no webhooks (a request/answer API): the
    shared webhook controls find nothing to hold, deliver or drop."""

    def start(self) -> None:
        """Nothing to start."""

    def stop(self) -> None:
        """Nothing to stop."""

    def pause(self) -> None:
        """Nothing to hold."""

    def resume(self) -> None:
        """Nothing to deliver."""

    def pending(self) -> list[JSON]:
        return []

    def discard(self, event_id: str | None = None) -> int:
        return 0

    def attempts(self) -> list[JSON]:
        return []

    def wait_idle(self, timeout: float) -> bool:
        return True


class SandboxBase(ABC):
    """One provider's sandbox: the provider's parts plus everything shared."""

    # Names the server's threads and its log lines (``stripe-sandbox``).
    serving_name: ClassVar[str]

    def __init__(
        self,
        *,
        clock: Clock | None,
        control_token: str | None,
        background_interval: float,
    ) -> None:
        self.clock = clock or Clock()
        self.control_token = control_token or secrets.token_urlsafe(24)
        self.faults = FaultBoard()
        self.received = RequestLog()
        self._interval = background_interval
        self._serving: Serving | None = None

    # -- the provider's parts --------------------------------------------------------------

    @abstractmethod
    def handle_api(
        self, method: str, target: str, headers: Mapping[str, str], body: bytes
    ) -> Response:
        """Serve one request to the provider's API."""

    @abstractmethod
    def _control(self) -> Dispatch:
        """The dispatcher of the ``/_sandbox/`` control routes."""

    @abstractmethod
    def _failure(self) -> Response:
        """The provider's answer to a request the sandbox failed to serve."""

    @abstractmethod
    def process_due(self) -> int:
        """Perform scheduled work that is due; returns how many items ran."""

    @property
    @abstractmethod
    def _deliveries(self) -> Deliveries:
        """The webhook dispatcher."""

    def _tick(self) -> None:
        """One round of the background ticker: due work."""
        self.process_due()

    # -- serving ---------------------------------------------------------------------------

    def start(self, host: str = "127.0.0.1", port: int = 0) -> SandboxHandle:
        """Serve on ``host:port`` (0 = any free port) from background threads."""
        if self._serving is not None:
            raise RuntimeError("this sandbox is already serving")
        self._serving = Serving(
            name=self.serving_name,
            api=self.handle_api,
            control=self._control(),
            failure=self._failure,
            tick=self._tick,
            interval=self._interval,
        )
        bound_host, bound_port = self._serving.start(host, port)
        self._deliveries.start()
        url = f"http://{bound_host}:{bound_port}"
        return SandboxHandle(url, bound_host, bound_port, self.control_token, self.stop)

    @property
    def url(self) -> str | None:
        """Where the sandbox serves (``http://host:port``), or ``None`` when stopped."""
        return self._serving.url if self._serving is not None else None

    def stop(self) -> None:
        """Stop the server, the ticker and webhook delivery."""
        serving, self._serving = self._serving, None
        if serving is not None:
            serving.stop()
        self._deliveries.stop()

    # -- time ------------------------------------------------------------------------------

    def now(self) -> float:
        """Sandbox time."""
        return self.clock.now()

    def advance_clock(self, seconds: float) -> float:
        """Move sandbox time forward and perform everything that became due."""
        now = self.clock.advance(seconds)
        self.process_due()
        return now

    # -- faults ----------------------------------------------------------------------------

    def armed_faults(self) -> list[Fault]:
        """Faults not yet used up (copies)."""
        return self.faults.armed()

    def clear_faults(self) -> None:
        """Disarm all faults, let held requests go, and remove added latency."""
        self.faults.clear()

    def holds(self) -> list[HoldState]:
        """Holds armed since the last clear: requests caught, waiting, released."""
        return self.faults.holds()

    def release_hold(self, hold_id: str | None = None) -> list[str]:
        """Let the requests a hold keeps (every hold's, when ``None``) commit and answer."""
        return self.faults.release(hold_id)

    def set_latency(self, ms: int) -> None:
        """Add ``ms`` milliseconds to every API call (benchmarks, timeouts)."""
        if ms < 0:
            raise ValueError("latency must not be negative")
        self.faults.latency_ms = ms

    # -- requests received -----------------------------------------------------------------

    def received_requests(self, account: str | None = None) -> list[ReceivedRequest]:
        """Every API request received (of one account or shop, when given), oldest first:
        method, path, the idempotency key it carried, and its answer; dropped and still
        unanswered ones included."""
        return self.received.entries(account)

    def clear_received_requests(self) -> None:
        """Forget the requests received so far."""
        self.received.clear()

    # -- webhooks --------------------------------------------------------------------------

    def pause_webhooks(self) -> None:
        """Hold every delivery until :meth:`resume_webhooks`."""
        self._deliveries.pause()

    def resume_webhooks(self) -> None:
        """Deliver what was held, in the order it was queued."""
        self._deliveries.resume()

    def pending_webhooks(self) -> list[JSON]:
        """Deliveries queued (held, or waiting for a retry)."""
        return self._deliveries.pending()

    def discard_webhooks(self, event_id: str | None = None) -> int:
        """Drop queued deliveries (of one event, or all); returns how many."""
        return self._deliveries.discard(event_id)

    def webhook_attempts(self) -> list[JSON]:
        """Every delivery attempt so far (event, target, status or error)."""
        return self._deliveries.attempts()

    def wait_for_webhooks(self, timeout: float = 5.0) -> bool:
        """Poll until no delivery is runnable or in flight (or ``timeout``)."""
        return self._deliveries.wait_idle(timeout)


def control_router(
    sandbox: SandboxBase,
    *,
    response_headers: Callable[[], dict[str, str]] = dict,
) -> ControlRouter:
    """A control router behind ``sandbox``'s token, holding the routes that mirror the
    shared controls; the provider adds its own routes to it."""
    s = sandbox
    router = ControlRouter(lambda: sandbox.control_token, response_headers=response_headers)
    add = router.add
    add("GET", "/_sandbox/health", lambda b, p: {"ok": True, "now": s.now()})
    add("GET", "/_sandbox/faults", lambda b, p: [f.to_json() for f in s.armed_faults()])
    add("DELETE", "/_sandbox/faults", lambda b, p: s.clear_faults())
    add("GET", "/_sandbox/holds", lambda b, p: [h.to_json() for h in s.holds()])
    add("POST", "/_sandbox/holds/release", lambda b, p: {"released": s.release_hold(b.get("id"))})
    add("GET", "/_sandbox/requests", lambda b, p: [r.to_json() for r in s.received_requests()])
    add("DELETE", "/_sandbox/requests", lambda b, p: s.clear_received_requests())
    add("POST", "/_sandbox/latency", lambda b, p: s.set_latency(int(b.get("ms") or 0)))
    add("GET", "/_sandbox/clock", lambda b, p: {"now": s.now()})
    add(
        "POST",
        "/_sandbox/clock/advance",
        lambda b, p: {"now": s.advance_clock(float(b["seconds"]))},
    )
    add("POST", "/_sandbox/process_due", lambda b, p: {"ran": s.process_due()})
    add("POST", "/_sandbox/webhooks/pause", lambda b, p: s.pause_webhooks())
    add("POST", "/_sandbox/webhooks/resume", lambda b, p: s.resume_webhooks())
    add(
        "POST",
        "/_sandbox/webhooks/discard",
        lambda b, p: {"discarded": s.discard_webhooks(b.get("event"))},
    )
    add("GET", "/_sandbox/webhooks/pending", lambda b, p: s.pending_webhooks())
    add("GET", "/_sandbox/webhooks/attempts", lambda b, p: s.webhook_attempts())
    return router
