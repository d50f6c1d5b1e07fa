"""The RQ job that runs a history scan, on the background queue, and its re-enqueueing.

A job reads for at most :data:`SLICE_SECONDS`, then queues the next slice behind the
queue's other work (drafting, privacy requests, order syncs wait half a minute at most
for a scan of any length) and ends; each slice resumes from the cursors the last one
stored. A slice also ends before a long wait for the provider's pace
(:data:`app.history_audit.scan.LONG_WAIT`): the next one is then scheduled (RQ's
scheduler, which the worker runs) :data:`SCHEDULER_LEAD` before its first request may
start, and waits out the rest itself, so no worker sleeps through a slow provider's pace.

A job's id is the scan's id and its last sign of life (the heartbeat, or its creation for
a scan not started), so a scan has at most one job per moment it was last seen alive: the
web, a finished slice and the sweeper may all enqueue it, and a second enqueue of the same
moment is a no-op. The sweeper (:func:`scans_to_resume`) enqueues every queued scan and
every running scan silent for :data:`SILENT_AFTER` (its worker died, its job failed):
always after the commit, and the database, not Redis, says what still needs doing. A
failed job's record is kept :data:`SILENT_AFTER` too, so a scan whose job failed before
it showed a sign of life is tried again then.
"""

from __future__ import annotations

import time
import uuid
from datetime import datetime, timedelta
from functools import cache
from typing import Any

from rq import Queue, get_current_job
from rq.exceptions import DuplicateJobError
from rq.job import JobStatus
from sqlalchemy import and_, or_, select
from sqlalchemy.orm import Session

from app.clock import utcnow
from app.crypto import secret_box
from app.history_audit.models import HistoryScan, ScanStatus
from app.history_audit.readers import history_readers
from app.history_audit.scan import ScanContext, run_scan
from app.jobs.context import WorkerContext, worker_context
from app.jobs.sweeper import Queues, Sweep, SweepReport

# How long one job reads before it makes way for the queue's other work.
SLICE_SECONDS = 30.0
# A running scan with no page kept for this long has lost its worker.
SILENT_AFTER = timedelta(minutes=3)
# RQ's scheduler moves a due job to its queue within a second of its time.
SCHEDULER_LEAD = timedelta(seconds=1)
_FUNCTION = "app.history_audit.jobs.scan_history"
_RESULT_TTL = 600


@cache
def context() -> ScanContext:
    worker = worker_context()
    return ScanContext(
        session_factory=worker.session_factory,
        readers=history_readers(worker.settings, secret_box(worker.settings)),
        clock=worker.clock,
    )


def scan_history(scan_id: str) -> str:
    """Read one slice of the scan; queue the next on this job's own queue if it is not
    read to its end."""
    ctx = context()
    scan = uuid.UUID(scan_id)
    status = run_scan(ctx, scan, until=time.monotonic() + SLICE_SECONDS)
    job = get_current_job()
    if status == ScanStatus.RUNNING and job is not None:
        with ctx.session_factory() as session:
            found = session.get(HistoryScan, scan)
            if found is not None:
                enqueue_scan(Queue(job.origin, connection=job.connection), found)
    return status


def scan_job_id(scan: HistoryScan) -> str:
    """The scan's id and its last sign of life, in milliseconds."""
    seen = scan.heartbeat_at or scan.created_at
    return f"history-{scan.id}-{int(seen.timestamp() * 1000)}"


def enqueue_scan(queue: Queue, scan: HistoryScan) -> bool:
    """Queue the scan's next job (after the commit that made it due), or schedule it for
    when its next request may start; False when the job for this moment of the scan was
    queued already."""
    options: dict[str, Any] = {
        "job_id": scan_job_id(scan),
        # A slice ends itself long before; this only stops a job stuck on a provider.
        "timeout": int(SLICE_SECONDS * 10),
        "result_ttl": _RESULT_TTL,
        "failure_ttl": int(SILENT_AFTER.total_seconds()),
    }
    due = scan.not_before - SCHEDULER_LEAD if scan.not_before is not None else None
    try:
        if due is not None and due > utcnow():
            job = queue.create_job(
                _FUNCTION, args=(str(scan.id),), status=JobStatus.SCHEDULED, **options
            )
            queue.schedule_job(job, due, unique=True)
        else:
            queue.enqueue_job(
                queue.create_job(_FUNCTION, args=(str(scan.id),), **options), unique=True
            )
    except DuplicateJobError:
        return False
    return True


def scans_to_resume(session: Session, now: datetime) -> list[HistoryScan]:
    """Scans with no job at work: queued ones, and running ones silent too long."""
    return list(
        session.scalars(
            select(HistoryScan).where(
                or_(
                    HistoryScan.status == ScanStatus.QUEUED,
                    and_(
                        HistoryScan.status == ScanStatus.RUNNING,
                        HistoryScan.heartbeat_at < now - SILENT_AFTER,
                    ),
                )
            )
        )
    )


def sweep_scans(ctx: WorkerContext, queues: Queues) -> SweepReport:
    with ctx.session_factory() as session:
        resuming = scans_to_resume(session, ctx.clock())
    return {
        "resuming_scans": [
            str(scan.id) for scan in resuming if enqueue_scan(queues.background, scan)
        ]
    }


SWEEP = Sweep("history scans", sweep_scans)
