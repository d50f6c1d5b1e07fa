"""The periodic sweep that makes the database, not Redis, the source of truth.

Every ``sweep_interval_seconds`` each area's :class:`Sweep` looks in the database for
the work it is owed (an approved action whose job Redis lost, a draft owed, a privacy
request unanswered, ...) and queues it, after its reads commit; the job ids make that safe
to do at any time (:mod:`app.jobs.queueing`). The areas and their order are
:data:`app.areas.SWEEPS`; :mod:`app.background` runs this loop as its own process.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from redis import Redis
from redis.exceptions import RedisError
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


def run_forever(ctx: WorkerContext, queues: Queues, sweeps: Sequence[Sweep]) -> None:
    while True:
        try:
            report = sweep(ctx, queues, sweeps)
        except (RedisError, OperationalError, OSError) as exc:
            # A daemon outlives a restarting Redis or database; the next sweep catches up.
            log.warning("sweep skipped: %s", exc)
        else:
            done = ", ".join(f"{heading}={ids}" for heading, ids in report.items() if ids)
            if done:
                log.info("sweep: %s", done)
        time.sleep(ctx.settings.sweep_interval_seconds)
