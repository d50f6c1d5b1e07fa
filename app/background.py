"""Caseward's background processes, assembled from every area (:mod:`app.areas`).

``python -m app.background worker`` runs the RQ worker (``rq worker --with-scheduler`` on
the money queue, then the background queue) with :class:`CasewardWorker`;
``python -m app.background sweeper`` runs the sweep of work owed every
``sweep_interval_seconds``. Both are configured only through the environment.
"""

from __future__ import annotations

import argparse

from rq import Queue

from app.areas import SWEEPS
from app.drafting.drafters import drafter_for
from app.execution import jobs as execution_jobs
from app.jobs.connection import connect_redis
from app.jobs.context import WorkerContext, worker_context
from app.jobs.sweeper import Queues, SweepReport, run_forever
from app.jobs.sweeper import sweep as sweep_areas
from app.jobs.worker import Worker, run_worker
from app.logs import log_plainly


class CasewardWorker(Worker):
    """The platform's worker with every area loaded (importing this module loads them)."""

    def warm_up(self) -> None:
        # The pool, the audit keys and the money executor's adapters; Claude's SDK and
        # client when this installation drafts with Claude.
        drafter_for(execution_jobs.context().settings)


def sweep(ctx: WorkerContext, queue: Queue) -> SweepReport:
    """Every area's sweep once; ``queue`` is the money queue, the background queue is
    the one of the same Redis named by the settings."""
    return sweep_areas(ctx, Queues.on(queue.connection, ctx.settings), SWEEPS)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m app.background")
    parser.add_argument("process", choices=["worker", "sweeper"])
    process = parser.parse_args(argv).process
    ctx = worker_context()
    if process == "worker":
        run_worker(ctx.settings, CasewardWorker)
        return
    log_plainly()
    run_forever(ctx, Queues.on(connect_redis(ctx.settings), ctx.settings), SWEEPS)


if __name__ == "__main__":
    main()
