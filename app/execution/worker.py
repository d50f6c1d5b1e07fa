"""The RQ worker class: ``rq worker --with-scheduler -w app.execution.worker.CasewardWorker``.

Importing the jobs here loads the whole app once in the parent process, so each
forked work horse starts warm; the horse then drops the inherited connections.
"""

from __future__ import annotations

from typing import Any

from rq import Worker

from app.execution import jobs


class CasewardWorker(Worker):
    def main_work_horse(self, *args: Any, **kwargs: Any) -> None:
        jobs.reset_after_fork()
        super().main_work_horse(*args, **kwargs)
