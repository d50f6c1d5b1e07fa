"""Fault injection: the failures the money path must survive, on demand.

The hard cases for exactly-once refunds are the ones where the client cannot know what
happened: the provider committed the refund and the connection died, or it answered 500
after committing. A fault is either armed in advance (match on method, path pattern,
idempotency key or key pattern such as ``caseward-action-*``, account (a Stripe account,
a Shopify shop domain) and/or operation (a GraphQL operation or root field name), for
the next ``count`` matching requests) or requested per call with the header
``Caseward-Sandbox-Fault: <kind>[;ms=<n>][;when=after]`` (several separated by commas).

Each sandbox's pipeline asks :meth:`FaultBoard.plan_for` once per request, after
authentication and before anything runs, and follows the resulting :class:`Plan`: drop
or fail before committing, wait at holds, commit, then drop, fail or delay after.

Kinds:

``drop_before_commit``      close the socket without doing anything.
``drop_after_commit``       execute, commit, save for idempotency, then close the socket.
``error_500_before_commit`` answer the provider's 500 without executing (nothing saved).
``error_500_after_commit``  execute and commit, answer 500; that 500 is what the key replays.
``delay``                   sleep ``ms`` then carry on (``when=after``: after committing).
``hold``                    wait before committing, the idempotency key already claimed, until
                            the test releases the hold (:meth:`FaultBoard.release`), or at
                            most ``ms`` (default 60 s) if it never does; then carry on.

A hold makes a race deterministic: the request is inside the provider, nothing of it visible yet,
for exactly as long as the test needs. It can only be armed (it is released by its id),
never asked for with the header.
"""

from __future__ import annotations

import fnmatch
import itertools
import threading
from dataclasses import asdict, dataclass, field
from typing import Any

FAULT_HEADER = "Caseward-Sandbox-Fault"

KINDS = (
    "drop_before_commit",
    "drop_after_commit",
    "error_500_before_commit",
    "error_500_after_commit",
    "delay",
    "hold",
)

# How long a hold nobody releases keeps its requests waiting: a forgotten hold must not
# keep a server thread forever.
DEFAULT_HOLD_MS = 60_000

_ids = itertools.count(1)


@dataclass
class Fault:
    """One armed fault and what requests it applies to."""

    kind: str
    method: str | None = None
    path: str | None = None
    idempotency_key: str | None = None
    account: str | None = None
    operation: str | None = None
    count: int = 1
    ms: int = 0
    when: str = "before"
    id: str = field(default_factory=lambda: f"fault_{next(_ids)}")

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; expected one of {KINDS}")
        if self.when not in ("before", "after"):
            raise ValueError("when must be 'before' or 'after'")
        if self.count < 1:
            raise ValueError("count must be at least 1")
        if self.ms < 0:
            raise ValueError("ms must not be negative")
        if self.method:
            self.method = self.method.upper()

    def matches(
        self,
        method: str,
        path: str,
        idempotency_key: str | None,
        account: str | None,
        operations: tuple[str, ...] = (),
    ) -> bool:
        """Whether a request is one this fault was armed for (``operations``: the names a
        GraphQL request answers to, its operation name and root fields)."""
        if self.method and self.method != method.upper():
            return False
        if self.path and not fnmatch.fnmatchcase(path, self.path):
            return False
        if self.idempotency_key and not fnmatch.fnmatchcase(
            idempotency_key or "", self.idempotency_key
        ):
            return False
        if self.operation and not any(
            fnmatch.fnmatchcase(name, self.operation) for name in operations
        ):
            return False
        return not (self.account and self.account != account)

    def to_json(self) -> dict[str, Any]:
        """Control-endpoint form."""
        return asdict(self)


def parse_header(value: str) -> list[Fault]:
    """Faults requested with the per-request header."""
    faults = []
    for chunk in value.split(","):
        parts = [p.strip() for p in chunk.split(";") if p.strip()]
        if not parts:
            continue
        kind, options = parts[0], dict(p.partition("=")[::2] for p in parts[1:])
        if ":" in kind:  # shorthand "delay:1500"
            kind, _, ms = kind.partition(":")
            options.setdefault("ms", ms)
        if kind.strip() == "hold":
            raise ValueError("a hold must be armed, so that it can be released by its id")
        faults.append(
            Fault(
                kind=kind.strip(),
                ms=int(options.get("ms", 0) or 0),
                when=options.get("when", "before"),
            )
        )
    return faults


@dataclass
class Plan:
    """What faults one request must suffer, merged from the header and armed faults."""

    delay_before_ms: int = 0
    delay_after_ms: int = 0
    drop_before: bool = False
    drop_after: bool = False
    error_before: bool = False
    error_after: bool = False
    holds: list[str] = field(default_factory=list)

    def add(self, fault: Fault) -> None:
        """Fold one fault into the plan."""
        if fault.kind == "delay":
            if fault.when == "after":
                self.delay_after_ms += fault.ms
            else:
                self.delay_before_ms += fault.ms
        elif fault.kind == "drop_before_commit":
            self.drop_before = True
        elif fault.kind == "drop_after_commit":
            self.drop_after = True
        elif fault.kind == "error_500_before_commit":
            self.error_before = True
        elif fault.kind == "error_500_after_commit":
            self.error_after = True
        elif fault.kind == "hold":
            self.holds.append(fault.id)


@dataclass
class HoldState:
    """A hold as a test sees it: the requests it caught, how many wait now, and whether
    it was released."""

    id: str
    caught: int
    waiting: int
    released: bool

    def to_json(self) -> dict[str, Any]:
        """Control-endpoint form."""
        return asdict(self)


class _Gate:
    """Where the requests caught by one hold wait."""

    def __init__(self, longest_wait_ms: int) -> None:
        self.opened = threading.Event()
        self.longest_wait = (longest_wait_ms or DEFAULT_HOLD_MS) / 1000.0
        self.caught = 0
        self.waiting = 0


class FaultBoard:
    """Armed faults plus the global latency setting."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._armed: list[Fault] = []
        self._gates: dict[str, _Gate] = {}
        self.latency_ms = 0

    def arm(self, fault: Fault) -> Fault:
        """Arm ``fault`` for the next ``fault.count`` matching requests."""
        with self._lock:
            self._armed.append(fault)
            if fault.kind == "hold":
                self._gates[fault.id] = _Gate(fault.ms)
        return fault

    def clear(self) -> None:
        """Disarm everything, let every held request go, and drop the added latency."""
        with self._lock:
            self._armed.clear()
            gates, self._gates = list(self._gates.values()), {}
            self.latency_ms = 0
        for gate in gates:
            gate.opened.set()

    def wait_at_holds(self, plan: Plan) -> None:
        """Keep the calling request here until each hold in its plan is released."""
        for hold_id in plan.holds:
            with self._lock:
                gate = self._gates.get(hold_id)
                if gate is None:  # cleared in the meantime
                    continue
                gate.caught += 1
                gate.waiting += 1
            try:
                gate.opened.wait(gate.longest_wait)
            finally:
                with self._lock:
                    gate.waiting -= 1

    def release(self, hold_id: str | None = None) -> list[str]:
        """Let the requests held by ``hold_id`` (every hold, when ``None``) go on; the
        hold is disarmed, so later requests pass. Returns the ids released."""
        with self._lock:
            if hold_id is not None and hold_id not in self._gates:
                raise KeyError(f"no hold {hold_id}")
            ids = [hold_id] if hold_id is not None else list(self._gates)
            self._armed = [f for f in self._armed if f.id not in ids]
            gates = [self._gates[i] for i in ids]
        for gate in gates:
            gate.opened.set()
        return ids

    def holds(self) -> list[HoldState]:
        """Every hold armed since the last :meth:`clear`, released or not."""
        with self._lock:
            return [
                HoldState(hold_id, gate.caught, gate.waiting, gate.opened.is_set())
                for hold_id, gate in self._gates.items()
            ]

    def armed(self) -> list[Fault]:
        """Faults still armed (copies)."""
        with self._lock:
            return [Fault(**asdict(f)) for f in self._armed]

    def plan_for(
        self,
        method: str,
        path: str,
        idempotency_key: str | None,
        account: str | None,
        header: str | None,
        operations: tuple[str, ...] = (),
    ) -> Plan:
        """Consume the armed faults matching this request and build its plan."""
        plan = Plan()
        if header:
            for fault in parse_header(header):
                plan.add(fault)
        with self._lock:
            remaining = []
            for fault in self._armed:
                if fault.matches(method, path, idempotency_key, account, operations):
                    plan.add(fault)
                    fault.count -= 1
                if fault.count > 0:
                    remaining.append(fault)
            self._armed = remaining
        return plan
