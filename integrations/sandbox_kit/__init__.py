"""What every provider sandbox needs, whatever provider it imitates.

A sandbox is a local stand-in for a provider's API (Stripe, Shopify) that the provider's
real client cannot tell from the real thing, plus controls for the failures the money
path must survive. The provider-specific parts (wire format, errors, idempotency rules,
objects) live in each sandbox; this kit holds the rest, one copy for all of them:

- :class:`Clock`: sandbox time, frozen or following the wall clock, moved by tests.
- :class:`Serving`, :class:`SandboxHTTPServer`, :class:`Response`, :class:`SandboxHandle`:
  a threaded HTTP server that can hang up on purpose, served beside a :class:`Ticker`.
- :class:`Fault`, :class:`FaultBoard`, :class:`Plan`: faults armed in advance or asked for
  per request (``Caseward-Sandbox-Fault``), and holds a test releases.
- :class:`RequestLog`, :class:`ReceivedRequest`: every request received and its answer.
- :class:`Schedule`, :class:`DueWork`: work due later on the sandbox clock.
- :class:`Outbox`, :func:`post`: background webhook delivery with retries, pause and
  redelivery; one delivery's POST and its outcome.
- :class:`ControlRouter`: the token-guarded ``/_sandbox/`` JSON control endpoints.
- :class:`SandboxBase`, :func:`control_router`: a sandbox object's shared half (serving,
  time, faults, holds, latency, request log, webhook switches) and the control routes
  mirroring it; :func:`serve_until_signalled`: a sandbox run as a process.

A sandbox's request pipeline uses them in this order: record the request as it arrives
(:class:`RequestLog`), authenticate in the provider's way, ask the :class:`FaultBoard`
for the request's :class:`Plan`, run due work (:class:`DueWork`), execute under the
provider's idempotency rules, let the plan drop or spoil the answer, record the answer.
"""

from .base import Deliveries, NoDeliveries, SandboxBase, control_router
from .clock import Clock
from .control import ControlError, ControlRouter, fault_from_json
from .faults import FAULT_HEADER, KINDS, Fault, FaultBoard, HoldState, Plan
from .outbox import Outbox, post
from .received import ReceivedRequest, RequestLog
from .server import (
    CONTROL_PREFIX,
    Dispatch,
    Response,
    SandboxHandle,
    SandboxHTTPServer,
    Serving,
    Ticker,
    serve_until_signalled,
    title_case,
)
from .tasks import DueWork, Schedule

__all__ = [
    "CONTROL_PREFIX",
    "FAULT_HEADER",
    "KINDS",
    "Clock",
    "ControlError",
    "ControlRouter",
    "Deliveries",
    "Dispatch",
    "DueWork",
    "Fault",
    "FaultBoard",
    "HoldState",
    "NoDeliveries",
    "Outbox",
    "Plan",
    "ReceivedRequest",
    "RequestLog",
    "Response",
    "SandboxBase",
    "SandboxHTTPServer",
    "SandboxHandle",
    "Schedule",
    "Serving",
    "Ticker",
    "control_router",
    "fault_from_json",
    "post",
    "serve_until_signalled",
    "title_case",
]
