"""After a proposal changes: commit first, then enqueue the action it created.

The order matters: a worker must never pick up an action the database does not hold
yet. The API and the operator page both go through here.
"""

from __future__ import annotations

from flask import current_app

from app.approvals.service import ProposalResult
from app.db import request_session
from app.execution.queueing import enqueue_execution
from app.queue import RedisExtension


def commit_and_enqueue(result: ProposalResult) -> None:
    request_session().commit()
    if result.action is not None:
        enqueue_execution(RedisExtension.queue(current_app), result.action.id)
