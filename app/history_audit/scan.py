"""Scanning a provider's history for the read-only audit: start, read page by page, resume.

The sequence (see ARCHITECTURE.md, "the audit never writes"):

1. :func:`start_scan` (an owner, or Caseward itself when a provider is connected): under
   the shop's row lock, a scan of that provider already queued or running is returned;
   otherwise a new one is queued with its window (``since``: ``window_days`` before now)
   and ``history.scan_started`` is audited. The caller commits, then enqueues the job
   (:mod:`app.history_audit.jobs`), never before.
2. :func:`run_scan`, in a worker: mark the scan running and build its reader from the
   shop's stored read-only credentials (:mod:`app.history_audit.readers`); credentials the
   provider or Caseward refuses, then or at any page, end the scan ``failed`` with the
   reason, audited ``history.scan_failed``. Anything else (the provider unreachable, a
   5xx) fails the job only: the scan stays where its last page left it, and the sweeper
   resumes it once it has been silent a while. Each run counts itself stalled until the
   provider answers a page; after :data:`MAX_STALLED_RUNS` such runs in a row (a provider
   down for an hour, or an error in a later step that no resume mends) the next one ends
   the scan ``failed`` with that reason, audited.
3. For each stream not yet read, from its stored cursor: wait for the :class:`Pacer` (never
   faster than the reader's ``requests_per_second``, asked again before every request),
   read one page outside any transaction, then in ONE transaction: lock the scan, check
   it still runs from that cursor (a second runner that got there first wins; this one
   stops), keep the page's records (inserted once per scan and provider id, so a page
   read twice after a crash is kept once), and write the stream's next cursor, counts,
   the oldest and newest record time seen, and the heartbeat. A throttle
   (:class:`~integrations.provider.Throttled`) waits what the provider asked and asks
   again with the same cursor.
4. A run reads until its ``until`` (a slice of the shared background queue's time), or
   until the next request would wait long (Shopify's pace can be a query every ten
   seconds), and returns ``running``; the job then queues the next slice for when its
   first request may start (``not_before``, stored with every page), which resumes from
   the cursors exactly as a run after a crash does.
5. When every stream is read, in ONE transaction: the findings are computed
   (:func:`app.history_audit.findings.compute_findings`, under the shop's policy as it
   stands), the scan is marked ``done``, the shop's previous report of that provider is
   superseded (its records and findings deleted, as are any a failed scan left), and
   ``history.scan_finished`` is audited with counts, never customer data.

A reader only ever reads: readers hold read permissions only and send GET requests
(Stripe) or queries (Shopify), never a write; the tests read the sandboxes' request logs.
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from sqlalchemy import delete, select
from sqlalchemy.orm import Session, sessionmaker

from app import audit
from app.actors import WORKER, Actor, ActorKind
from app.connections.models import Connection
from app.db import insert_unless_present
from app.errors import CasewardError, Forbidden
from app.history_audit.findings import compute_findings
from app.history_audit.models import HistoryFinding, HistoryRecord, HistoryScan, ScanStatus
from app.shopify.models import ShopifyInstall
from app.shops.models import Shop, StaffRole
from app.shops.service import current_policy, get_shop, require_role
from app.validation import choice, integer
from app.words import Sentence, said
from integrations.history import HistoryPage, HistoryReader, PastMoneyAction
from integrations.provider import CredentialsRefused, ProviderRejected, Throttled

PROVIDERS = ("stripe", "shopify")
DEFAULT_WINDOW_DAYS = 90
MAX_WINDOW_DAYS = 365
# A provider's throttle without a wait of its own: ask again after this long.
_THROTTLE_WAIT = 1.0
# The share of a reader's rate the scan keeps to. A provider counts requests as they
# arrive, which is a little earlier or later than they were sent: at exactly Stripe's 25
# a second, a 26th arriving a millisecond early is refused, and its Retry-After costs a
# whole second. 95% leaves 50 ms of every second for that.
PACE_SHARE = 0.95
# Runs in a row that may end before the provider answers a page: at 3 minutes between the
# sweeper's resumes, about an hour of a provider down, or of an error in Caseward's own
# step that no resume will mend, before the scan ends failed and says so.
MAX_STALLED_RUNS = 20
# In a run cut in slices, a wait for the next request longer than this (seconds) ends the
# slice: the next one is scheduled for when the request may start.
LONG_WAIT = 2.0
# Pages are read newest first unless their records say otherwise (see ``_order_of``).
NEWEST_FIRST, OLDEST_FIRST = "newest_first", "oldest_first"
# What a runner answers when another runner of the same scan kept a page first: that one
# carries the scan on.
TAKEN_OVER = "taken_over"


class ReaderFactory(Protocol):
    def __call__(self, session: Session, shop_id: uuid.UUID, provider: str) -> HistoryReader: ...


@dataclass(frozen=True)
class ScanContext:
    """What a scan needs from the outside: storage, readers, time."""

    session_factory: sessionmaker[Session]
    readers: ReaderFactory
    clock: Callable[[], datetime]
    sleep: Callable[[float], None] = time.sleep
    monotonic: Callable[[], float] = time.monotonic


class Pacer:
    """Starts requests at least ``1 / rate()`` seconds apart, waiting as long as needed.

    ``rate`` is asked before every request, so a reader that learns what the provider
    allows as it reads (a cost bucket's refill against what its pages really cost) is
    followed at once. Written here rather than taken from a library: the rate limiters at
    hand (``limits``, under Flask-Limiter) count whole requests per whole seconds and
    answer "allowed or not" without waiting, while a reader's rate is often fractional (a
    Shopify shop's bucket refills 100 points a second, and a page may be priced at 982)
    and the scan wants to be told how long to wait, on a clock tests can drive. Spacing
    requests evenly, rather than in bursts, also keeps every window the provider measures
    under its limit.
    """

    def __init__(
        self,
        rate: Callable[[], float],
        *,
        monotonic: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._rate = rate
        self._monotonic = monotonic
        self._sleep = sleep
        self._last_start: float | None = None
        self._held_until = 0.0

    def wait(self) -> None:
        """Return when the next request may start (at once for the first)."""
        per_second = self._rate()
        if per_second <= 0:
            raise ValueError("a reader allows a positive number of requests per second")
        now = self._monotonic()
        start = max(now, self._held_until)
        if self._last_start is not None:
            start = max(start, self._last_start + 1.0 / per_second)
        if start > now:
            self._sleep(start - now)
        self._last_start = start

    def hold_off(self, seconds: float) -> None:
        """The provider asked for a pause: nothing starts before ``seconds`` from now."""
        self._held_until = max(self._held_until, self._monotonic() + seconds)

    def next_start(self) -> float:
        """The earliest the next request may start, on the monotonic clock."""
        if self._last_start is None:
            return self._held_until
        return max(self._held_until, self._last_start + 1.0 / self._rate())


# ------------------------------------------------------------------ starting


def start_scan(
    session: Session,
    *,
    shop: Shop,
    provider: object,
    actor: Actor,
    now: datetime,
    window_days: object = DEFAULT_WINDOW_DAYS,
) -> HistoryScan:
    """Queue a scan of ``provider``'s history over the last ``window_days``; owners only,
    or Caseward itself (a provider just connected). A scan of that shop and provider
    already queued or running is returned instead. The caller commits, then enqueues."""
    if actor.kind is not ActorKind.SYSTEM:
        require_role(session, shop.id, actor, StaffRole.OWNER_ONLY, said("run the audit"))
    provider = choice(provider, "provider", PROVIDERS)
    days = integer(window_days, "window_days", minimum=1, maximum=MAX_WINDOW_DAYS)
    _require_connection(session, shop, provider)
    get_shop(session, shop.id, for_update=True)  # two starts at once make one scan
    current = session.scalars(
        select(HistoryScan)
        .where(
            HistoryScan.shop_id == shop.id,
            HistoryScan.provider == provider,
            HistoryScan.status.in_((ScanStatus.QUEUED, ScanStatus.RUNNING)),
        )
        .order_by(HistoryScan.created_at.desc())
        .limit(1)
    ).one_or_none()
    if current is not None:
        return current
    scan = HistoryScan(
        shop_id=shop.id,
        provider=provider,
        status=ScanStatus.QUEUED,
        window_days=days,
        since=now - timedelta(days=days),
        streams={},
        requests=0,
        requested_by=actor.ref,
        created_at=now,
    )
    session.add(scan)
    session.flush()
    audit.record(
        session,
        shop_id=shop.id,
        kind="history.scan_started",
        actor=actor,
        data={"scan": str(scan.id), "provider": provider, "window_days": days},
        now=now,
    )
    return scan


def _require_connection(session: Session, shop: Shop, provider: str) -> None:
    """Refuse at once what the scan could only fail on: a provider the shop never connected."""
    if provider == "shopify":
        connected = shop.uninstalled_at is None and session.get(ShopifyInstall, shop.id) is not None
    else:
        connected = (
            session.scalars(
                select(Connection.id).where(
                    Connection.shop_id == shop.id, Connection.provider == provider
                )
            ).first()
            is not None
        )
    if not connected:
        raise Forbidden(
            said("the shop has no %(provider)s connection", provider=provider),
            code="not_connected",
        )


def newest_scans(session: Session, shop_id: uuid.UUID) -> list[HistoryScan]:
    """Each provider's newest scan in the shop (providers never scanned are left out)."""
    newest = []
    for provider in PROVIDERS:
        scan = session.scalars(
            select(HistoryScan)
            .where(HistoryScan.shop_id == shop_id, HistoryScan.provider == provider)
            .order_by(HistoryScan.created_at.desc())
            .limit(1)
        ).one_or_none()
        if scan is not None:
            newest.append(scan)
    return newest


# ------------------------------------------------------------------ running


def run_scan(ctx: ScanContext, scan_id: uuid.UUID, *, until: float | None = None) -> str:
    """Read the scan's streams from their cursors until done, or, given ``until`` (a
    ``ctx.monotonic`` time), until it passes or the next request must wait longer than
    :data:`LONG_WAIT`; returns the scan's status afterwards, or :data:`TAKEN_OVER`. Safe
    to call any number of times, also twice at once: every page is kept once."""
    run = _begin(ctx, scan_id)
    if isinstance(run, str):
        return run
    for name in run.reader.streams:
        stopped = _read_stream(run, name, until)
        if stopped is not None:
            return stopped
    return _finish(ctx, scan_id)


@dataclass
class _Run:
    """One runner's reading of a scan: its reader, where each stream stands, its pace."""

    ctx: ScanContext
    scan_id: uuid.UUID
    reader: HistoryReader
    streams: dict[str, dict[str, Any]]
    since: datetime
    pacer: Pacer
    # When this run last kept a page (or began), and the wait for the provider's pace it
    # began with (spent before the run, off the worker): what the next page took.
    mark: float
    carried: float

    def page_seconds(self) -> float:
        """How long the page just kept took, the pace's waits included and the time a
        scan stood still without a worker left out."""
        now = self.ctx.monotonic()
        seconds = now - self.mark + self.carried
        self.mark, self.carried = now, 0.0
        return seconds

    def not_before(self) -> datetime:
        """When the next request may start, on Caseward's clock (stored with the scan)."""
        ahead = max(self.pacer.next_start() - self.ctx.monotonic(), 0.0)
        # Rounded up to the microseconds the column keeps: never a moment early.
        return self.ctx.clock() + timedelta(microseconds=math.ceil(ahead * 1_000_000))


def _begin(ctx: ScanContext, scan_id: uuid.UUID) -> _Run | str:
    """Mark the scan running and build its reader; the scan's status if it will not run."""
    with ctx.session_factory() as session, session.begin():
        scan = _locked_scan(session, scan_id)
        if scan is None or scan.status not in (ScanStatus.QUEUED, ScanStatus.RUNNING):
            return scan.status if scan is not None else "missing"
        now = ctx.clock()
        carried = 0.0  # the part of the pace's wait that passed before this run
        if scan.not_before is not None and scan.heartbeat_at is not None:
            waited = min(scan.not_before, now) - scan.heartbeat_at
            carried = max(waited.total_seconds(), 0.0)
        if scan.stalled_runs >= MAX_STALLED_RUNS:
            _fail(session, scan, _stalled(scan.stalled_runs), now)
            return scan.status
        scan.status = ScanStatus.RUNNING
        scan.started_at = scan.started_at or now
        # Committed before anything can fail: this runner's sign of life, so the sweeper's
        # next resume of the scan is a job of its own; and this run counted as stalled
        # until the provider answers it.
        scan.heartbeat_at = now
        scan.stalled_runs += 1
    with ctx.session_factory() as session, session.begin():
        scan = _locked_scan(session, scan_id)
        if scan is None or scan.status != ScanStatus.RUNNING:
            return scan.status if scan is not None else "missing"
        try:
            reader = ctx.readers(session, scan.shop_id, scan.provider)
        except (CasewardError, CredentialsRefused, ProviderRejected) as refused:
            _fail(session, scan, _refusal(scan.provider, refused), ctx.clock())
            return scan.status
        streams = {name: _stream_state(scan.streams.get(name)) for name in reader.streams}
        scan.streams = streams
        pacer = Pacer(
            lambda: reader.requests_per_second * PACE_SHARE,
            monotonic=ctx.monotonic,
            sleep=ctx.sleep,
        )
        if scan.not_before is not None:  # the last runner's pace, or the provider's ask
            pacer.hold_off((scan.not_before - ctx.clock()).total_seconds())
        return _Run(ctx, scan_id, reader, streams, scan.since, pacer, ctx.monotonic(), carried)


def _read_stream(run: _Run, stream: str, until: float | None) -> str | None:
    """Read ``stream`` to its end (``None``), or stop: the slice is over, the provider
    refused the reader, or another runner took the scan over (what the scan is then)."""
    ctx, state = run.ctx, run.streams[stream]
    while not state["done"]:
        if until is not None and _slice_over(run, until):
            return ScanStatus.RUNNING
        run.pacer.wait()
        try:
            page = run.reader.read_page(stream, since=run.since, cursor=state["cursor"])
        except (CredentialsRefused, ProviderRejected) as refused:
            return _fail_now(ctx, run.scan_id, _refusal(run.reader.provider, refused))
        except Throttled as throttled:
            run.pacer.hold_off(throttled.retry_after or _THROTTLE_WAIT)
            _held_off(run, asked=throttled.asked)
            continue
        kept = _keep_page(run, stream, state, page)
        if kept is None:
            return TAKEN_OVER
        state = kept
    return None


def _slice_over(run: _Run, until: float) -> bool:
    """A slice ends at ``until``, or before a wait longer than :data:`LONG_WAIT`: the
    job that runs it then hands the wait to the queue's scheduler, and the worker serves
    other jobs meanwhile."""
    now = run.ctx.monotonic()
    return now >= until or run.pacer.next_start() - now > LONG_WAIT


def _stream_state(stored: Mapping[str, Any] | None) -> dict[str, Any]:
    state: dict[str, Any] = {
        "cursor": None,
        "done": False,
        "records": 0,
        "pages": 0,
        "oldest": None,
        "newest": None,
        "order": None,
        "seconds": 0.0,
    }
    state.update(stored or {})
    return state


def _keep_page(
    run: _Run, stream: str, read_from: Mapping[str, Any], page: HistoryPage
) -> dict[str, Any] | None:
    """Keep the page and move the stream's cursor on, in one transaction; ``None`` when
    the stream no longer stands where this page was read from."""
    with run.ctx.session_factory() as session, session.begin():
        scan = _locked_scan(session, run.scan_id)
        if scan is None or scan.status != ScanStatus.RUNNING:
            return None
        state = _stream_state(scan.streams.get(stream))
        if state["done"] or state["cursor"] != read_from["cursor"]:
            return None
        records = [record for record in page.records if record.created >= scan.since]
        added = _insert_once(session, scan, records)
        state["cursor"] = page.next_cursor
        state["done"] = page.next_cursor is None
        state["records"] += added
        state["pages"] += 1
        state["seconds"] = round(state["seconds"] + run.page_seconds(), 3)
        state["order"] = state["order"] or _order_of(page.records)
        times = [record.created for record in records]
        if times:
            state["oldest"] = _iso(min([*times, *_times(state["oldest"])]))
            state["newest"] = _iso(max([*times, *_times(state["newest"])]))
        # A new dict: the JSON column notices an assignment, not a change inside it.
        scan.streams = {**scan.streams, stream: state}
        scan.requests += 1
        scan.stalled_runs = 0
        scan.heartbeat_at = run.ctx.clock()
        scan.not_before = run.not_before()
        return state


def _insert_once(session: Session, scan: HistoryScan, records: Sequence[PastMoneyAction]) -> int:
    """Insert the records the scan does not hold yet; returns how many were new."""
    rows = {
        record.id: {
            "id": uuid.uuid4(),
            "scan_id": scan.id,
            "shop_id": scan.shop_id,
            "provider": record.provider,
            "kind": str(record.kind),
            "record_id": record.id,
            "created": record.created,
            "customer": record.customer,
            "amount": record.amount,
            "currency": record.currency,
            "percent_off": record.percent_off,
            "payment": record.payment,
            "payment_amount": record.payment_amount,
            "payment_disputed": record.payment_disputed,
            "status": record.status,
            "caseward_action_id": record.caseward_action_id,
            "detail": dict(record.detail),
        }
        for record in records
    }
    if not rows:
        return 0
    statement = insert_unless_present(session, HistoryRecord, ["scan_id", "record_id"])
    inserted = session.scalars(
        statement.values(list(rows.values())).returning(HistoryRecord.record_id)
    )
    return len(inserted.all())


def _order_of(records: Sequence[PastMoneyAction]) -> str | None:
    """Which way a stream pages, read from its first page with two distinct times."""
    times = [record.created for record in records]
    if len(set(times)) < 2:
        return None
    return NEWEST_FIRST if times[0] > times[-1] else OLDEST_FIRST


def _held_off(run: _Run, *, asked: bool) -> None:
    """Keep the wait a throttle asked for and show the scan alive; a request the provider
    turned away was still a request (counted), one the reader held back was not."""
    with run.ctx.session_factory() as session, session.begin():
        scan = _locked_scan(session, run.scan_id)
        if scan is not None:
            scan.requests += 1 if asked else 0
            scan.stalled_runs = 0  # the provider, or what it last said, still answers
            scan.heartbeat_at = run.ctx.clock()
            scan.not_before = run.not_before()


def _finish(ctx: ScanContext, scan_id: uuid.UUID) -> str:
    with ctx.session_factory() as session, session.begin():
        scan = _locked_scan(session, scan_id)
        if scan is None or scan.status != ScanStatus.RUNNING:
            return scan.status if scan is not None else "missing"
        now = ctx.clock()
        findings = compute_findings(session, scan, current_policy(session, scan.shop_id), now)
        earlier = session.scalars(
            select(HistoryScan)
            .where(
                HistoryScan.shop_id == scan.shop_id,
                HistoryScan.provider == scan.provider,
                HistoryScan.id != scan.id,
                HistoryScan.status.in_((ScanStatus.DONE, ScanStatus.FAILED)),
            )
            .with_for_update()
        ).all()
        _forget(session, [old.id for old in earlier])
        superseded = [old for old in earlier if old.status == ScanStatus.DONE]
        for old in superseded:
            old.status = ScanStatus.SUPERSEDED
        scan.status = ScanStatus.DONE
        scan.finished_at = scan.heartbeat_at = now
        audit.record(
            session,
            shop_id=scan.shop_id,
            kind="history.scan_finished",
            actor=WORKER,
            data={
                "scan": str(scan.id),
                "provider": scan.provider,
                "window_days": scan.window_days,
                "records": sum(s["records"] for s in scan.streams.values()),
                "pages": sum(s["pages"] for s in scan.streams.values()),
                "requests": scan.requests,
                "findings": findings,
                "superseded": [str(old.id) for old in superseded],
            },
            now=now,
        )
        return scan.status


def _forget(session: Session, scan_ids: Sequence[uuid.UUID]) -> None:
    """Delete what earlier scans kept: only the current report is ever counted."""
    if scan_ids:
        session.execute(delete(HistoryFinding).where(HistoryFinding.scan_id.in_(scan_ids)))
        session.execute(delete(HistoryRecord).where(HistoryRecord.scan_id.in_(scan_ids)))


def _fail_now(ctx: ScanContext, scan_id: uuid.UUID, reason: Sentence) -> str:
    with ctx.session_factory() as session, session.begin():
        scan = _locked_scan(session, scan_id)
        if scan is None or scan.status != ScanStatus.RUNNING:
            return scan.status if scan is not None else "missing"
        _fail(session, scan, reason, ctx.clock())
        return scan.status


def _fail(session: Session, scan: HistoryScan, reason: Sentence, now: datetime) -> None:
    scan.status = ScanStatus.FAILED
    scan.error, scan.error_sentence = str(reason), reason.to_dict()
    scan.finished_at = now
    audit.record(
        session,
        shop_id=scan.shop_id,
        kind="history.scan_failed",
        actor=WORKER,
        data={"scan": str(scan.id), "provider": scan.provider, "reason": str(reason)},
        now=now,
    )


def _stalled(runs: int) -> Sentence:
    return said(
        "the audit stopped after %(runs)s attempts in a row read nothing: the provider did "
        "not answer, or Caseward could not keep what it read; run the audit again later",
        runs=runs,
    )


def _refusal(provider: str, refused: Exception) -> Sentence:
    """Why the provider, or Caseward, will not let the scan read, as a sentence: a
    refusal never gets better by asking again (a key refused or lacking a permission, a
    grant gone), so the scan ends with it."""
    if isinstance(refused, CasewardError):
        return refused.sentence
    return said(
        "%(provider)s refused the audit's read: %(refusal)s",
        provider=provider,
        refusal=str(refused),
    )


def _locked_scan(session: Session, scan_id: uuid.UUID) -> HistoryScan | None:
    return session.scalars(
        select(HistoryScan).where(HistoryScan.id == scan_id).with_for_update()
    ).one_or_none()


def _iso(moment: datetime) -> str:
    return moment.isoformat()


def _times(stored: str | None) -> list[datetime]:
    return [] if stored is None else [datetime.fromisoformat(stored)]


# ------------------------------------------------------------------ progress


@dataclass(frozen=True)
class StreamProgress:
    name: str
    done: bool
    # How much of the window is read, 0..1.
    share: float
    records: int
    pages: int


@dataclass(frozen=True)
class ScanProgress:
    share: float
    records: int
    pages: int
    requests: int
    # Estimated from the rate so far; None until there is a rate to go by.
    seconds_left: float | None
    streams: tuple[StreamProgress, ...] = field(default_factory=tuple)


def scan_progress(scan: HistoryScan) -> ScanProgress:
    """How far the scan has read, per stream and in all, and how long the rest should take.

    A stream's share of the window is read from the oldest record it has seen (streams
    paged newest first, as Stripe's lists and Caseward's Shopify queries are), or from the
    newest for a stream whose pages came oldest first; a stream read to its end counts
    whole. Time left: a stream under way will take as long again as its share so far took
    it, per share; a stream not started yet, as long as the others took on average.
    """
    end = scan.since + timedelta(days=scan.window_days)
    streams = tuple(
        _stream_progress(name, _stream_state(stored), scan.since, end)
        for name, stored in scan.streams.items()
    )
    finished = scan.status in (ScanStatus.DONE, ScanStatus.SUPERSEDED)
    share = 1.0 if finished else _mean([s.share for s in streams])
    return ScanProgress(
        share=share,
        records=sum(s.records for s in streams),
        pages=sum(s.pages for s in streams),
        requests=scan.requests,
        seconds_left=0.0 if finished else _seconds_left(scan, streams),
        streams=streams,
    )


def _stream_progress(
    name: str, state: Mapping[str, Any], since: datetime, end: datetime
) -> StreamProgress:
    if state["done"]:
        share = 1.0
    elif state["order"] == OLDEST_FIRST and state["newest"] is not None:
        share = _between(datetime.fromisoformat(state["newest"]), since, end)
    elif state["oldest"] is not None:
        share = 1.0 - _between(datetime.fromisoformat(state["oldest"]), since, end)
    else:
        share = 0.0
    return StreamProgress(name, bool(state["done"]), share, state["records"], state["pages"])


def _between(moment: datetime, since: datetime, end: datetime) -> float:
    """Where ``moment`` falls in the window, 0 (its start) to 1 (its end)."""
    span = (end - since).total_seconds()
    return min(max((moment - since).total_seconds() / span, 0.0), 1.0)


def _seconds_left(scan: HistoryScan, streams: Sequence[StreamProgress]) -> float | None:
    if scan.status not in (ScanStatus.QUEUED, ScanStatus.RUNNING):
        return None
    spent = {name: float(_stream_state(state)["seconds"]) for name, state in scan.streams.items()}
    whole: list[float] = []  # how long each stream with a rate takes in all
    left, unstarted = 0.0, 0
    for stream in streams:
        seconds = spent[stream.name]
        if stream.done:
            whole.append(seconds)
        elif stream.share > 0 and seconds > 0:
            whole.append(seconds / stream.share)
            left += seconds / stream.share - seconds
        else:
            unstarted += 1
    if not whole:
        return None
    return round(left + unstarted * _mean(whole), 1)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0
