"""Transitions that happen after the request that caused them.

A card refund fails a while after it "succeeded"; a dispute lands seconds after a charge;
a pending refund settles once the balance is back. Provider code schedules such work in
a :class:`Schedule` with a due time on the sandbox clock, and registers what each kind
of work does with :meth:`DueWork.task`. :meth:`DueWork.run` performs whatever is due; a
sandbox calls it before every API request, on every clock advance and from its ticker.

Scheduled items are plain JSON (``{"due", "kind", ...}``) so they survive snapshots.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

JSON = dict[str, Any]
Ctx = TypeVar("Ctx")


class Schedule:
    """Work waiting for the clock, as JSON items."""

    def __init__(self, items: list[JSON] | None = None) -> None:
        self.items: list[JSON] = list(items or [])

    def add(self, due: float, kind: str, **data: Any) -> None:
        """Arrange for ``kind`` to happen once the clock reaches ``due``."""
        self.items.append({"due": due, "kind": kind, **data})

    def take_due(self, now: float) -> list[JSON]:
        """Remove and return the items that are due, oldest first."""
        due = sorted((t for t in self.items if t["due"] <= now), key=lambda t: t["due"])
        if due:
            self.items = [t for t in self.items if t["due"] > now]
        return due


class DueWork(Generic[Ctx]):
    """What each kind of scheduled work does, plus sweeps that check conditions rather
    than times (such as "balance restored"), for one provider's context type."""

    def __init__(self) -> None:
        self._tasks: dict[str, Callable[[Ctx, JSON], None]] = {}
        self._sweeps: list[Callable[[Ctx], None]] = []

    def task(
        self, kind: str
    ) -> Callable[[Callable[[Ctx, JSON], None]], Callable[[Ctx, JSON], None]]:
        """Register the function that performs scheduled work of ``kind``."""

        def register(fn: Callable[[Ctx, JSON], None]) -> Callable[[Ctx, JSON], None]:
            self._tasks[kind] = fn
            return fn

        return register

    def sweep(self, fn: Callable[[Ctx], None]) -> Callable[[Ctx], None]:
        """Register a check that runs each time due work is processed."""
        self._sweeps.append(fn)
        return fn

    def run(self, ctx: Ctx, schedule: Schedule, now: float) -> int:
        """Run the sweeps, then every item of ``schedule`` due at ``now`` (including work
        that due work schedules for already-due times); returns how many items ran."""
        for check in self._sweeps:
            check(ctx)
        ran = 0
        while batch := schedule.take_due(now):
            for item in batch:
                fn = self._tasks.get(str(item["kind"]))
                if fn is not None:
                    fn(ctx, item)
                    ran += 1
        return ran
