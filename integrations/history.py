"""A provider's past money actions, read page by page for the read-only audit.

Before Caseward may move money in a shop, it reads what already moved: refunds, customer
credits, discounts, subscription cancellations and changes, from Stripe and from Shopify,
with read permissions only. Each provider's reader turns its records into
:class:`PastMoneyAction` and hands them over one page at a time, with a cursor that a
restarted scan resumes from. Nothing here writes to a provider, and nothing here imports
``app``.

The contract every reader keeps:

* ``streams``: the kinds of record it reads, each paged on its own (``"refunds"``,
  ``"discounts"`` ...), in the order a scan reads them;
* ``read_page(stream, since=..., cursor=...)``: the next page of records created at or
  after ``since``, oldest or newest first as the provider pages (the scan does not care),
  and the cursor of the page after it (``None``: the stream is read to its end). The same
  cursor always gives the same page, so a page read twice (a crash between reading it and
  storing it) is stored once by its records' ids;
* a provider's 429 or throttle is raised as :class:`~integrations.provider.Throttled`
  with the wait it asked for, before anything of the page is returned; the scan waits and
  asks again with the same cursor (a throttle the reader foresaw without asking says
  ``asked=False``, and is not counted as a request);
* ``requests_per_second``: the most read requests per second the provider allows this
  key, which the scan paces itself to (and the benchmark compares the scan's rate with).
  It may change as the reader reads (Shopify's pace depends on what pages cost), so the
  scan asks for it before every request.

Amounts are integers in the currency's minor unit; currencies lower-case ISO 4217.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from integrations.provider import ActionKind


@dataclass(frozen=True)
class PastMoneyAction:
    """One money action a provider reports in its history.

    ``id`` is the provider's own id for the record (unique per provider). ``amount`` is
    what the customer got (a refund, a credit, an amount off) or ``None`` for a percent
    discount (``percent_off``) and a subscription change without an amount. ``payment``
    is what a refund gave money back from (a Stripe payment intent or charge, a Shopify
    order), with what it captured and whether it is disputed, as read during the scan.
    ``caseward_action_id`` is set when the record carries Caseward's own metadata (it was
    one of Caseward's actions). ``detail`` holds a few words for people: a discount's code,
    a subscription's plan; never card numbers or a customer's contact details.
    """

    provider: str
    kind: ActionKind
    id: str
    created: datetime
    customer: str | None
    amount: int | None
    currency: str | None
    percent_off: int | None = None
    payment: str | None = None
    payment_amount: int | None = None
    payment_disputed: bool = False
    status: str | None = None
    caseward_action_id: str | None = None
    detail: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class HistoryPage:
    records: tuple[PastMoneyAction, ...]
    next_cursor: str | None


class HistoryReader(Protocol):
    provider: str
    streams: tuple[str, ...]

    @property
    def requests_per_second(self) -> float: ...

    def read_page(self, stream: str, *, since: datetime, cursor: str | None) -> HistoryPage: ...
