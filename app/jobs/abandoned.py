"""Jobs whose worker died under them, found as soon as their heartbeat lapses.

A started job holds a place among its queue's started jobs until one job-monitoring
interval plus 60 s after its worker's last beat (:mod:`app.jobs.worker`). RQ looks for
places that lapsed in its maintenance, which a worker runs every ten minutes, and an idle
worker only between waits of several minutes: a killed worker's job waited that long.
Every sweep runs RQ's own clean-up of those places instead (:func:`sweep_abandoned_jobs`),
first of all sweeps: a job with a retry left is queued again (a drafting job or a helpdesk
call, after its retry's interval); any other is failed, and its area's sweep then queues
what its rows say is still owed (an action's sends are settled by the executor's sweep, not
run again blindly).
"""

from __future__ import annotations

from rq.registry import StartedJobRegistry

from app.jobs.context import WorkerContext
from app.jobs.sweeper import Queues, Sweep, SweepReport


def sweep_abandoned_jobs(ctx: WorkerContext, queues: Queues) -> SweepReport:
    """Retry or fail every started job whose heartbeat lapsed by ``ctx.clock()``."""
    now = ctx.clock().timestamp()
    abandoned: list[str] = []
    for queue in (queues.money, queues.background):
        started = StartedJobRegistry(queue=queue)
        lapsed = started.get_expired_job_ids(now)
        if lapsed:
            started.cleanup(now)
            abandoned.extend(lapsed)
    return {"abandoned jobs": abandoned}


SWEEP = Sweep("abandoned jobs", sweep_abandoned_jobs)
