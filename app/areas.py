"""Every area of Caseward, loaded: what each process imports before it runs any of them.

Loading maps every table (:mod:`app.models`) and connects each area's receivers to the
money executor's signals (:mod:`app.execution.events`): approvals reopen a proposal whose
approval expired, conversations tell the customer of a new status, alerts tell the
owner. :data:`SWEEPS` lists each area's sweep of the work it is owed, in the order the
sweeper runs them: jobs a dead worker left, then money, then the rest.
"""

from __future__ import annotations

# Loaded for what loading does: every table mapped; the receivers of the money
# executor's signals connected (a proposal whose approval expired is reopened, the
# customer is told of a new status, the owner of a brake tripped and what else they
# must hear).
from app import audit_checkpoints, models  # noqa: F401
from app.alerts import jobs as alerts
from app.approvals import service as approvals  # noqa: F401
from app.conversations import updates  # noqa: F401
from app.drafting import jobs as drafting
from app.execution import sweep as execution
from app.helpdesk import jobs as helpdesk
from app.history_audit import jobs as history_audit
from app.jobs import abandoned as abandoned_jobs
from app.jobs.sweeper import Sweep
from app.privacy import jobs as privacy

SWEEPS: tuple[Sweep, ...] = (
    # First: a job a dead worker left started is retried or failed before the areas look
    # at their jobs (a started job would otherwise keep them from queueing its work).
    abandoned_jobs.SWEEP,
    execution.SWEEP,
    # Right after the executor's: an owner hears of what its sweep escalated at once.
    alerts.SWEEP,
    audit_checkpoints.SWEEP,
    helpdesk.SWEEP,
    privacy.SWEEP,
    drafting.SWEEP,
    history_audit.SWEEP,
)
