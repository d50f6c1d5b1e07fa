"""Stripe transitions that happen after the request that caused them.

A ``pm_card_refundFail`` refund turns ``failed`` a while after it "succeeded"; a
``pm_card_createDispute`` charge is disputed seconds after it was paid; a pending refund
settles once the balance is back. Resource code schedules such work on its space
(:meth:`~.store.Space.schedule`) and registers what it does with :func:`task` or
:func:`sweep`; :func:`run_due` performs whatever is due in every space, and runs before
every API request, on every clock advance and from the background ticker.
"""

from __future__ import annotations

from integrations.sandbox_kit import DueWork

from .context import Core, Ctx

WORK: DueWork[Ctx] = DueWork()

# Decorators for resource modules: ``@task("settle_refund")``, ``@sweep``.
task = WORK.task
sweep = WORK.sweep


def run_due(core: Core) -> int:
    """Perform all due work in every space; returns how many tasks ran."""
    ran = 0
    with core.store.lock:
        now = core.clock.now()
        for space in core.store.all_spaces():
            account = core.store.accounts.get(space.account_id)
            if account is None:
                continue
            ran += WORK.run(Ctx(core=core, account=account, space=space), space.tasks, now)
        if ran:
            core.store.dirty = True
    return ran
