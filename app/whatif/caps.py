"""What counts against the caps at any moment of the shop's past, held in memory.

The checks of a proposal were handed what counted against the caps of the policy then in
force (:func:`app.execution.ledger.cap_spending`); another policy's caps count other money
(another customer's share, another currency, a longer period), so each replay adds it up
again, as the ledger does, from the money that moved before the moment replayed: our
actions (those the provider has, over the cap's period; those on their way, however old)
and the records the history check read that no action of ours stands behind, which moved
money all the same. Each sum is two binary searches in the moves of one customer (or of
the whole shop) in one currency.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from app.execution.ledger import HISTORY_HORIZON
from app.guard import CapRule, CapSpend, CapSpending, PolicyRules


@dataclass(frozen=True)
class Move:
    """Money that moved (or is on its way) to ``customer`` at ``at``, in minor units."""

    at: datetime
    amount: int
    currency: str
    customer: str | None
    # Ours, not yet reported by the provider: it counts against a cap however old.
    on_its_way: bool = False


class _Series:
    """Amounts in time order, summed over any span by their running totals."""

    def __init__(self, moves: list[tuple[datetime, int]]) -> None:
        moves.sort(key=lambda move: move[0])
        self.times = [at for at, _amount in moves]
        self.totals = [0]
        for _at, amount in moves:
            self.totals.append(self.totals[-1] + amount)

    def between(self, start: datetime | None, end: datetime) -> int:
        """What moved from ``start`` (inclusive; None: from the first) up to ``end``."""
        first = 0 if start is None else bisect_left(self.times, start)
        last = bisect_left(self.times, end)
        return self.totals[last] - self.totals[first] if last > first else 0


_Whose = tuple[str | None, str]  # (a customer, or None for the whole shop; a currency)


class MoneyMoves:
    """The past's money, by customer and currency and for the whole shop."""

    def __init__(self, moves: Iterable[Move]) -> None:
        done: dict[_Whose, list[tuple[datetime, int]]] = defaultdict(list)
        on_its_way: dict[_Whose, list[tuple[datetime, int]]] = defaultdict(list)
        for move in moves:
            into = on_its_way if move.on_its_way else done
            into[(None, move.currency)].append((move.at, move.amount))
            if move.customer:
                into[(move.customer, move.currency)].append((move.at, move.amount))
        self._done = {whose: _Series(series) for whose, series in done.items()}
        self._on_its_way = {whose: _Series(series) for whose, series in on_its_way.items()}

    def spending(self, policy: PolicyRules, customer: str | None, now: datetime) -> CapSpending:
        """What counted against each of ``policy``'s caps just before ``now``: the case's
        ``customer``'s money for the per-customer cap, the shop's for the per-shop cap."""
        per_customer = policy.per_customer_cap
        return CapSpending(
            customer=self._spend(per_customer, customer, now)
            if per_customer and customer
            else None,
            shop=self._spend(policy.per_shop_cap, None, now) if policy.per_shop_cap else None,
        )

    def _spend(self, cap: CapRule, whose: str | None, now: datetime) -> CapSpend:
        key = (whose, cap.limit.currency)
        done, on_its_way = self._done.get(key), self._on_its_way.get(key)
        since = now - min(cap.period, HISTORY_HORIZON)
        return CapSpend(
            done=done.between(since, now) if done else 0,
            in_flight=on_its_way.between(None, now) if on_its_way else 0,
        )
