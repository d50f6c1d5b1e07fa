"""The case queue: a shop's cases by what they wait for, with a count per filter.

Four filters, each a question a person asks of the queue, answered from the stored
statuses alone (nothing is guessed):

* ``needs_approval``: a proposal awaits someone's approval.
* ``unknown_outcome``: an action was sent and the provider has not said what became of
  it (``unknown``), or a person must decide (``needs_decision``).
* ``failed``: an open case whose action failed or was refused at the provider, or was
  stopped before sending (halted, cannot run, canceled).
* ``waiting_on_customer``: an open case only the customer can move on: they have not
  shown who they are (identity ``none`` or a mere ``claim``; nothing can be proposed for
  them), or the provider asks them to act on a refund (``requires_action``).

A search (:class:`CaseSearch`) narrows the queue further: a case number (a range of the
primary key: ``C-AA49BDD4`` is the ids from ``aa49bdd4-0000-...`` to ``aa49bdd4-ffff-...``),
an order number, words of the customer's name or email or of the subject, a status, an
owner, the day opened. The queue comes :data:`QUEUE_LENGTH` cases a page.

A case may match several filters. Every query is limited to one shop, and the counts
are one query: one row of conditional counts over the shop's cases. Each filter is the
case's id ``IN`` one sub-query over the shop's proposals or actions, which the database
reads once per query; a sub-query correlated with each case may be planned as a walk
through all the shop's proposals for every case (it was, with 1,000 cases in tables not
yet analysed: 130 ms for the counts alone).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from enum import StrEnum

from sqlalchemy import ColumnElement, and_, func, or_, select
from sqlalchemy.orm import Session

from app.cases.models import REFERENCE_PREFIX, Case, CaseStatus, Customer, Order
from app.cases.proposals import Proposal, ProposalStatus
from app.execution.models import Action, ActionStatus
from app.guard import IdentityLevel

# Cases a page of the queue shows.
QUEUE_LENGTH = 50


class QueueFilter(StrEnum):
    NEEDS_APPROVAL = "needs_approval"
    UNKNOWN_OUTCOME = "unknown_outcome"
    FAILED = "failed"
    WAITING_ON_CUSTOMER = "waiting_on_customer"


UNKNOWN_OUTCOME_STATUSES = ActionStatus.OUTCOME_UNKNOWN
FAILED_STATUSES = (
    ActionStatus.FAILED,
    ActionStatus.REJECTED,
    ActionStatus.CANCELED,
    ActionStatus.HALTED,
    ActionStatus.CANNOT_RUN,
)
UNIDENTIFIED = (IdentityLevel.NONE, IdentityLevel.CLAIM)


@dataclass(frozen=True)
class CaseSearch:
    """What a person narrows the queue by, each part optional: ``text`` is a case number
    (``C-AA49BDD4``), an order number (``#1001``), or words of the customer's name or
    email or of the case's subject; the case's status and owner; the day it was opened,
    from and to (both included, UTC)."""

    text: str = ""
    status: CaseStatus | None = None
    owner: str | None = None
    opened_from: date | None = None
    opened_to: date | None = None
    page: int = 1

    @property
    def narrows(self) -> bool:
        return bool(self.text or self.status or self.owner or self.opened_from or self.opened_to)


@dataclass(frozen=True)
class QueueRow:
    case: Case
    matches: frozenset[QueueFilter]
    customer: str | None = None


@dataclass(frozen=True)
class CaseQueue:
    """One page of the cases the filter and the search select (newest change first), how
    many they select in all, how many cases each filter selects, and how many the shop has."""

    selected: QueueFilter | None
    search: CaseSearch
    rows: list[QueueRow]
    counts: Mapping[QueueFilter, int]
    total: int
    matching: int
    owners: list[str]
    limit: int = QUEUE_LENGTH

    @property
    def pages(self) -> int:
        return max(1, -(-self.matching // self.limit))

    @property
    def has_previous(self) -> bool:
        return self.search.page > 1

    @property
    def has_next(self) -> bool:
        return self.search.page < self.pages


def case_queue(
    session: Session,
    shop_id: uuid.UUID,
    selected: QueueFilter | None = None,
    search: CaseSearch | None = None,
) -> CaseQueue:
    search = search or CaseSearch()
    conditions = _conditions(shop_id)
    count_row = session.execute(
        select(
            func.count(),
            *(func.count().filter(condition) for condition in conditions.values()),
        ).where(Case.shop_id == shop_id)
    ).one()
    total, *per_filter = count_row
    counts = dict(zip(conditions, per_filter, strict=True))
    narrowed = [Case.shop_id == shop_id]
    if selected is not None:
        narrowed.append(conditions[selected])
    narrowed.extend(_searched(shop_id, search))
    if search.narrows:
        matching = session.scalar(select(func.count()).select_from(Case).where(*narrowed)) or 0
    else:
        matching = counts[selected] if selected is not None else total
    query = (
        select(
            Case,
            Customer.name,
            *(condition.label(name) for name, condition in conditions.items()),
        )
        .outerjoin(Customer, Customer.id == Case.customer_id)
        .where(*narrowed)
        .order_by(Case.updated_at.desc(), Case.id)
        .limit(QUEUE_LENGTH)
        .offset((search.page - 1) * QUEUE_LENGTH)
    )
    rows = [
        QueueRow(
            case=row[0],
            customer=row[1],
            matches=frozenset(name for name, flag in zip(conditions, row[2:], strict=True) if flag),
        )
        for row in session.execute(query).all()
    ]
    return CaseQueue(
        selected=selected,
        search=search,
        rows=rows,
        counts=counts,
        total=total,
        matching=matching,
        owners=_owners(session, shop_id),
    )


def _owners(session: Session, shop_id: uuid.UUID) -> list[str]:
    """Everyone a case of the shop was handed to, for the search's choice of owner."""
    return list(
        session.scalars(
            select(Case.owner)
            .where(Case.shop_id == shop_id, Case.owner.is_not(None))
            .distinct()
            .order_by(Case.owner)
        )
    )


def _searched(shop_id: uuid.UUID, search: CaseSearch) -> list[ColumnElement[bool]]:
    """The search as conditions on a ``cases`` row, its sub-queries kept to the shop."""
    found: list[ColumnElement[bool]] = []
    if search.text:
        found.append(or_(*_text_matches(shop_id, search.text)))
    if search.status is not None:
        found.append(Case.status == search.status)
    if search.owner:
        found.append(Case.owner == search.owner)
    if search.opened_from is not None:
        found.append(Case.created_at >= _midnight(search.opened_from))
    if search.opened_to is not None:
        found.append(Case.created_at < _midnight(search.opened_to + timedelta(days=1)))
    return found


def _text_matches(shop_id: uuid.UUID, text: str) -> list[ColumnElement[bool]]:
    words = f"%{_escaped(text.lower())}%"
    customers = select(Customer.id).where(
        Customer.shop_id == shop_id,
        or_(
            func.lower(Customer.name).like(words, escape="\\"),
            func.lower(Customer.email).like(words, escape="\\"),
        ),
    )
    order = text if text.startswith("#") else f"#{text}"
    ordered = select(Order.customer_id).where(Order.shop_id == shop_id, Order.name == order)
    matches: list[ColumnElement[bool]] = [
        func.lower(Case.subject).like(words, escape="\\"),
        Case.customer_id.in_(customers),
        Case.customer_id.in_(ordered),
    ]
    ids = _reference_range(text)
    if ids is not None:
        matches.append(Case.id.between(*ids))
    return matches


def _reference_range(text: str) -> tuple[uuid.UUID, uuid.UUID] | None:
    """The ids whose case number begins as ``text`` does (``C-AA49BDD4``, ``aa49``): a
    range of the primary key, so the number is found by its index."""
    digits = text.strip().upper().removeprefix(REFERENCE_PREFIX).replace("-", "").lower()
    if not 4 <= len(digits) <= 32 or any(digit not in "0123456789abcdef" for digit in digits):
        return None
    return uuid.UUID(digits.ljust(32, "0")), uuid.UUID(digits.ljust(32, "f"))


def _escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _midnight(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def _conditions(shop_id: uuid.UUID) -> dict[QueueFilter, ColumnElement[bool]]:
    """Each filter as a condition on a ``cases`` row, its sub-queries kept to the shop."""

    def has_proposal(*statuses: str) -> ColumnElement[bool]:
        return Case.id.in_(
            select(Proposal.case_id).where(
                Proposal.shop_id == shop_id, Proposal.status.in_(statuses)
            )
        )

    def has_action(*statuses: str) -> ColumnElement[bool]:
        return Case.id.in_(
            select(Action.case_id).where(Action.shop_id == shop_id, Action.status.in_(statuses))
        )

    still_open = Case.status != CaseStatus.RESOLVED
    return {
        QueueFilter.NEEDS_APPROVAL: has_proposal(ProposalStatus.AWAITING_APPROVAL),
        QueueFilter.UNKNOWN_OUTCOME: has_action(*UNKNOWN_OUTCOME_STATUSES),
        QueueFilter.FAILED: and_(still_open, has_action(*FAILED_STATUSES)),
        QueueFilter.WAITING_ON_CUSTOMER: and_(
            still_open,
            or_(
                Case.identity_level.in_(UNIDENTIFIED),
                has_action(ActionStatus.REQUIRES_ACTION),
            ),
        ),
    }
