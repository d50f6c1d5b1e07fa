"""Transitions that happen after the request that caused them.

A ``pm_card_refundFail`` refund turns ``failed`` a while after it "succeeded"; a
``pm_card_createDispute`` charge is disputed seconds after it was paid; a pending refund
settles once the balance is back. Resource code schedules such work on the space with a
due time on the sandbox clock; :func:`run_due` performs whatever is due, and runs before
every API request, on every clock advance and from a background ticker.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .context import Core, Ctx

Task = Callable[[Ctx, dict[str, Any]], None]
_TASKS: dict[str, Task] = {}
_SWEEPS: list[Callable[[Ctx], None]] = []


def task(kind: str) -> Callable[[Task], Task]:
    """Register the function that performs scheduled work of ``kind``."""

    def register(fn: Task) -> Task:
        _TASKS[kind] = fn
        return fn

    return register


def sweep(fn: Callable[[Ctx], None]) -> Callable[[Ctx], None]:
    """Register a check that runs on every space each time due work is processed
    (for conditions rather than times, such as "balance restored")."""
    _SWEEPS.append(fn)
    return fn


def run_due(core: Core) -> int:
    """Perform all due work in every space; returns how many tasks ran."""
    ran = 0
    with core.store.lock:
        now = core.clock.now()
        for space in core.store.all_spaces():
            account = core.store.accounts.get(space.account_id)
            if account is None:
                continue
            ctx = Ctx(core=core, account=account, space=space)
            for check in _SWEEPS:
                check(ctx)
            # Work may schedule follow-up work that is already due: loop until quiet.
            while batch := space.take_due(now):
                for item in batch:
                    fn = _TASKS.get(str(item["kind"]))
                    if fn is not None:
                        fn(ctx, item)
                        ran += 1
            if ran:
                core.store.dirty = True
    return ran
