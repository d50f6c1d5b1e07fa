"""The periodic sweep that makes the database, not Redis, the source of truth.

Every ``sweep_interval_seconds`` each area's :class:`Sweep` looks in the database for
the work it is owed (an approved action whose job Redis lost, a draft owed, a privacy
request unanswered, ...) and queues it, after its reads commit; the job ids make that safe
to do at any time (:mod:`app.jobs.queueing`). The areas and their order are
:data:`app.areas.SWEEPS`; :mod:`app.background` runs this loop as its own process.

Any number of sweeper processes may run (one per machine, or a standby): they take turns
through a lock on the deployment's Redis (:class:`SweepTurns`), so one sweeps at a time and
the deployment sweeps once per interval, whichever machine holds the turn. A sweeper that
dies mid-sweep holds its turn at most :data:`SWEEP_TIME_LIMIT` seconds. Each loop also
notes on Redis that this machine's sweeper turns and when a sweep last ended, which its
health check reads (:mod:`app.jobs.health`).
"""

from __future__ import annotations

import logging
import signal
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from redis import Redis
from redis.exceptions import LockError, RedisError
from redis.lock import Lock
from rq import Queue
from sqlalchemy.exc import OperationalError

from app.jobs.context import WorkerContext
from app.jobs.queueing import queue_named
from app.settings import Settings

log = logging.getLogger(__name__)

# What one sweep found and queued, by heading ("requeued", "drafting", ...): ids.
SweepReport = dict[str, list[str]]


@dataclass(frozen=True)
class Queues:
    """Where a sweep queues work: money first, everything slower behind it."""

    money: Queue
    background: Queue

    @classmethod
    def on(cls, connection: Redis, settings: Settings) -> Queues:
        return cls(
            money=queue_named(connection, settings.queue_name),
            background=queue_named(connection, settings.background_queue_name),
        )


@dataclass(frozen=True)
class Sweep:
    """One area's work owed: ``run`` finds it, queues it after its reads commit, and says
    what it did under its own headings."""

    area: str
    run: Callable[[WorkerContext, Queues], SweepReport]


def sweep(ctx: WorkerContext, queues: Queues, sweeps: Sequence[Sweep]) -> SweepReport:
    """Run every area's sweep once, in order."""
    report: SweepReport = {}
    for each in sweeps:
        report.update(each.run(ctx, queues))
    return report


# The longest a sweep may hold its turn: one whose sweeper died gives it up after this.
# A sweep takes well under a second; one that overran it would only repeat work, which the
# job ids and row locks make harmless.
SWEEP_TIME_LIMIT = 120.0


class SweepTurns:
    """Whose turn it is to sweep, among every sweeper of the deployment (the keys carry the
    money queue's name, so two deployments on one Redis keep apart). The turn is redis-py's
    lock: taken without waiting, released only by its holder's token."""

    def __init__(self, connection: Redis, settings: Settings) -> None:
        self.connection = connection
        self.interval = settings.sweep_interval_seconds
        prefix = f"caseward:sweeper:{settings.queue_name}"
        self.lock_key = f"{prefix}:turn"
        self.swept_key = f"{prefix}:swept-at"
        self.turning_key = f"{prefix}:turning:{socket.gethostname()}"
        self.turn = Lock(
            connection,
            self.lock_key,
            timeout=SWEEP_TIME_LIMIT,
            blocking=False,
            thread_local=False,
            raise_on_release_error=False,
        )

    def take(self) -> bool:
        """This sweeper's turn, if nobody holds it."""
        return bool(self.turn.acquire())

    def give_back(self, started: float) -> None:
        """The turn taken at ``started`` (monotonic), kept until its interval has passed, so
        that no other sweeper sweeps again sooner."""
        left = self.interval - (time.monotonic() - started)
        try:
            if left > 0:
                self.turn.extend(left, replace_ttl=True)
            else:
                self.turn.release()
        except LockError:
            # No longer ours (it outlived the time limit and another took it): theirs stands.
            pass

    def note_swept(self) -> None:
        self.connection.set(self.swept_key, repr(time.time()))

    def note_turning(self) -> None:
        """This machine's sweeper loop is alive (it need not hold the turn)."""
        self.connection.set(self.turning_key, repr(time.time()), ex=max(60, int(self.interval * 3)))


def sweep_once(
    ctx: WorkerContext, queues: Queues, sweeps: Sequence[Sweep], turns: SweepTurns
) -> SweepReport | None:
    """Every area's sweep, if it is this sweeper's turn; None when another holds it."""
    turns.note_turning()
    started = time.monotonic()
    if not turns.take():
        return None
    try:
        report = sweep(ctx, queues, sweeps)
        turns.note_swept()
    finally:
        turns.give_back(started)
    return report


def run_forever(ctx: WorkerContext, queues: Queues, sweeps: Sequence[Sweep]) -> None:
    # Told to stop (a deploy), a sweeper gives its turn back on the way out rather than
    # holding it for the time limit.
    signal.signal(signal.SIGTERM, _leave)
    turns = SweepTurns(queues.money.connection, ctx.settings)
    while True:
        try:
            report = sweep_once(ctx, queues, sweeps, turns)
        except (RedisError, OperationalError, OSError) as exc:
            # A daemon outlives a restarting Redis or database; the next sweep catches up.
            log.warning("sweep skipped: %s", exc)
        else:
            done = ", ".join(f"{heading}={ids}" for heading, ids in (report or {}).items() if ids)
            if done:
                log.info("sweep: %s", done)
        time.sleep(ctx.settings.sweep_interval_seconds)


def _leave(_signum: int, _frame: object) -> None:
    raise SystemExit(0)
