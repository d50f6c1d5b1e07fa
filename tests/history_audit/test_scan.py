"""The read-only audit's scan against the Stripe and Shopify sandboxes, over HTTP.

Each shop's history is seeded at real past times in its own Stripe account or Shopify
shop, with a few records just outside the 90-day window. Connecting Stripe through the
staff API, or installing in Shopify through the admin's first page load, starts the
scan; scans run in-process as the worker's job runs them (``run_scan`` with the readers
built from the stored credentials), or in a real worker process that is killed mid-scan.
What the scan kept is read from the database, what it sent from the sandboxes' request
logs.
"""

from __future__ import annotations

import base64
import itertools
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from urllib.parse import urlencode

import pytest
from flask import Flask
from flask.testing import FlaskClient
from history_scan_support import (
    STRIPE_READ_ONLY,
    SteppedClock,
    StripeShop,
    kept_ids,
    newest,
    scan_context,
    scans_of,
    shopify_history,
    stripe_history,
    stripe_shop,
    the_scan,
)
from money_path_harness import WorkerProcess, wait_for
from rq.registry import ScheduledJobRegistry
from sandbox_settings import with_sandbox
from shopify_support import serving_sandbox
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.audit import AuditEvent
from app.background import sweep
from app.clock import utcnow
from app.connections.adapters import connection_adapters
from app.crypto import SecretBox, secret_box
from app.execution.executor import ExecutionContext
from app.history_audit.jobs import (
    SCHEDULER_LEAD,
    SILENT_AFTER,
    SLICE_SECONDS,
    enqueue_scan,
    scan_job_id,
    scans_to_resume,
)
from app.history_audit.models import HistoryFinding, HistoryRecord, HistoryScan, ScanStatus
from app.history_audit.scan import (
    LONG_WAIT,
    MAX_STALLED_RUNS,
    PACE_SHARE,
    Pacer,
    ScanContext,
    run_scan,
)
from app.jobs.connection import connect_redis
from app.jobs.queueing import queue_named
from app.settings import Settings
from app.shops.models import Shop
from integrations.history import HistoryPage, HistoryReader
from integrations.provider import Throttled
from integrations.shopify.history import READ_SCOPES, STANDARD_RESTORE_RATE, page_costs
from integrations.shopify.sandbox import SandboxShop, ShopifySandbox
from integrations.stripe.sandbox import RateLimits, StripeSandbox

CLIENT_ID = "caseward-history-scan-client-id"
APP_SECRET = "shpss_history_scan_app_secret_0123456789"
ENCRYPTION_KEY = SecretBox.generate_key()
SHOP_OWNER = 1001


@pytest.fixture(scope="module")
def shopify() -> Iterator[ShopifySandbox]:
    with serving_sandbox(CLIENT_ID, APP_SECRET) as box:
        yield box


@pytest.fixture
def settings(settings: Settings, sandbox: StripeSandbox, shopify: ShopifySandbox) -> Settings:
    assert shopify.url is not None
    return with_sandbox(
        settings,
        sandbox,
        encryption_keys=(ENCRYPTION_KEY,),
        shopify_api_key=CLIENT_ID,
        shopify_api_secret=APP_SECRET,
        shopify_api_base=shopify.url,
        provider_timeout_seconds=5.0,
    )


@pytest.fixture
def shop(app: Flask, session: Session, sandbox: StripeSandbox) -> StripeShop:
    return stripe_shop(app, session, sandbox, "linen")


def _connected_scan(shop: StripeShop, session: Session) -> uuid.UUID:
    """Connect the shop's key; the scan that starts with it."""
    answer = shop.connect()
    assert answer.status_code == 200, answer.get_json()
    return newest(scans_of(session, shop.shop_id), "stripe").id


def _methods(sandbox: StripeSandbox, account: str) -> Counter[str]:
    return Counter(request.method for request in sandbox.received_requests(account))


# ------------------------------------------------------------------ Stripe


def test_connecting_stripe_scans_every_record_of_the_window_once_with_reads_only(
    app: Flask, settings: Settings, session: Session, sandbox: StripeSandbox, shop: StripeShop
) -> None:
    seeded = stripe_history(sandbox, shop.account.id)
    scan_id = _connected_scan(shop, session)
    queued = shop.viewer.get("/api/shop/history-audit").get_json()["scans"]
    assert [(s["provider"], s["status"], s["window_days"]) for s in queued] == [
        ("stripe", "queued", 90)
    ]

    status = run_scan(scan_context(app, settings), scan_id)

    assert status == ScanStatus.DONE
    kept = kept_ids(session, scan_id)
    assert len(kept) == len(set(kept))  # none kept twice
    assert set(kept) == seeded.inside  # every record of the window, none outside it
    # Only reads reached Stripe, during the scan as before it.
    assert set(_methods(sandbox, shop.account.id)) == {"GET"}
    scan = shop.viewer.get("/api/shop/history-audit").get_json()["scans"][0]
    assert scan["status"] == "done"
    assert scan["progress"]["share"] == 1.0 and scan["progress"]["seconds_left"] == 0.0
    assert scan["progress"]["records"] == len(seeded.inside)
    assert {s["name"]: s["records"] for s in scan["progress"]["streams"]} == {
        "refunds": 122,
        "customer_credits": 2,
        "discounts": 3,
        "subscriptions": 2,
    }
    kinds = [
        kind
        for (kind,) in session.execute(
            select(AuditEvent.kind)
            .where(AuditEvent.shop_id == shop.shop_id, AuditEvent.kind.like("history.%"))
            .order_by(AuditEvent.seq)
        )
    ]
    assert kinds == ["history.scan_started", "history.scan_finished"]


# ------------------------------------------------------------------ Shopify


def _install_through_the_admin(client: FlaskClient, shopify: ShopifySandbox, domain: str) -> None:
    """The owner opens the app in the Shopify admin for the first time: Caseward installs."""
    host = base64.urlsafe_b64encode(f"admin.shopify.com/store/{domain}".encode()).decode()
    token = shopify.session_token(domain, user_id=SHOP_OWNER, issued_at=time.time())
    query = {"embedded": "1", "shop": domain, "host": host.rstrip("="), "id_token": token}
    page = client.get(f"/app?{urlencode(query)}")
    assert page.status_code == 200, page.get_data(as_text=True)[:300]


def _store(shopify: ShopifySandbox, name: str, *scopes: str) -> SandboxShop:
    """A shop of the Shopify sandbox that granted the audit's read scopes (and ``scopes``)."""
    return shopify.create_shop(
        f"{name}-{uuid.uuid4().hex[:6]}", owner_user_id=SHOP_OWNER, scopes=(*READ_SCOPES, *scopes)
    )


def _installed_scan(
    client: FlaskClient, session: Session, shopify: ShopifySandbox, domain: str
) -> HistoryScan:
    """Install in the shop through the admin; the scan the install started. What the install
    itself asked Shopify (the store's currency) is forgotten: only the scan's reads count."""
    _install_through_the_admin(client, shopify, domain)
    shopify.clear_received_requests()
    return newest(scans_of(session, _shop_of(session, domain).id), "shopify")


def _stepped(app: Flask, settings: Settings) -> tuple[SteppedClock, ScanContext]:
    """The scan's context on a clock that moves only when the scan waits."""
    clock = SteppedClock()
    return clock, replace(scan_context(app, settings), monotonic=clock.monotonic, sleep=clock.sleep)


def _shop_of(session: Session, domain: str) -> Shop:
    session.expire_all()
    return session.scalars(select(Shop).where(Shop.domain == domain)).one()


def test_installing_in_shopify_scans_every_record_of_the_window_once_with_queries_only(
    app: Flask,
    client: FlaskClient,
    settings: Settings,
    session: Session,
    shopify: ShopifySandbox,
) -> None:
    store = _store(shopify, "loom", "read_all_orders")
    seeded = shopify_history(shopify, store.domain)

    scan = _installed_scan(client, session, shopify, store.domain)
    assert (scan.status, scan.requested_by) == (ScanStatus.QUEUED, "system:install")
    clock, ctx = _stepped(app, settings)
    # When each page was read, and the pace the reader asked for after it.
    built: list[HistoryReader] = []
    reads: list[tuple[float, float]] = []

    def remembered(session: Session, shop_id: uuid.UUID, provider: str) -> HistoryReader:
        built.append(scan_context(app, settings).readers(session, shop_id, provider))
        return built[-1]

    ctx = watched(
        replace(ctx, readers=remembered),
        lambda _read, _stream: reads.append((clock.now, built[-1].requests_per_second)),
    )
    status = run_scan(ctx, scan.id)

    assert status == ScanStatus.DONE
    kept = kept_ids(session, scan.id)
    assert len(kept) == len(set(kept))
    assert set(kept) == seeded.inside
    operations = shopify.received_operations(store.domain)
    assert operations and {operation.kind for operation in operations} == {"query"}
    # Paced as the reader asked after each answer: never two queries closer than that.
    assert len(reads) == len(operations) > 2
    for (started, rate), (next_started, _) in itertools.pairwise(reads):
        assert next_started - started >= 1 / (rate * PACE_SHARE) - 1e-9
    # Pages cost less than their worst case, and the pace follows what they cost.
    worst = STANDARD_RESTORE_RATE / max(page_costs().values())
    assert min(rate for _, rate in reads) > worst
    assert clock.now < (len(operations) - 1) / worst / 2


def test_a_shopify_history_with_planted_problems_has_each_found_and_nothing_else(
    app: Flask,
    client: FlaskClient,
    settings: Settings,
    session: Session,
    shopify: ShopifySandbox,
) -> None:
    store = _store(shopify, "planted")
    now, day = time.time(), 86_400.0
    seeded = shopify.seed_history(
        store.domain,
        {
            "customers": [{"ref": "maya"}, {"ref": "ravi"}],
            "orders": [
                {  # refunded twice, $20.00 each, ten minutes apart: a duplicate
                    "customer": "maya",
                    "created_at": now - 12 * day,
                    "total": 9_600,
                    "refunds": [
                        {"ref": "twice-1", "created_at": now - 10 * day, "amount": 2_000},
                        {"ref": "twice-2", "created_at": now - 10 * day + 600, "amount": 2_000},
                    ],
                },
                {  # refunded while its payment is disputed
                    "customer": "ravi",
                    "created_at": now - 8 * day,
                    "total": 5_000,
                    "disputes": ["NEEDS_RESPONSE"],
                    "refunds": [{"ref": "disputed", "created_at": now - 5 * day, "amount": 1_500}],
                },
                {  # clean: one refund each
                    "customer": "ravi",
                    "created_at": now - 22 * day,
                    "total": 4_000,
                    "refunds": [{"ref": "clean-1", "created_at": now - 20 * day, "amount": 1_000}],
                },
                {
                    "customer": "maya",
                    "created_at": now - 32 * day,
                    "total": 3_000,
                    "refunds": [{"ref": "clean-2", "created_at": now - 30 * day, "amount": 700}],
                },
            ],
            "store_credits": [
                {"ref": "credit-1", "customer": "maya", "amount": 500, "created_at": now - 3 * day},
                {"ref": "credit-2", "customer": "ravi", "amount": 300, "created_at": now - 4 * day},
            ],
            "discounts": [  # 80% off, above the policy's 50%; and a clean 10%
                {
                    "ref": "friends",
                    "code": "FRIENDS80",
                    "created_at": now - 6 * day,
                    "percentage": 0.8,
                },
                {"ref": "sorry", "code": "SORRY10", "created_at": now - 7 * day, "percentage": 0.1},
            ],
        },
    )
    scan = _installed_scan(client, session, shopify, store.domain)
    _clock, ctx = _stepped(app, settings)

    assert run_scan(ctx, scan.id) == ScanStatus.DONE

    ref = seeded.refs
    findings = session.scalars(select(HistoryFinding).where(HistoryFinding.scan_id == scan.id))
    found = Counter((finding.rule, tuple(finding.records)) for finding in findings)
    planted = {
        ("duplicate", (ref["twice-1"], ref["twice-2"])),
        ("disputed_refund", (ref["disputed"],)),
        ("large_discount", (ref["friends"],)),
    }
    # Before Caseward nothing was guarded: every record is on record as such, once.
    unguarded = {("unguarded", (gid,)) for gid in ref.values() if gid.startswith("gid://")}
    unguarded -= {("unguarded", (ref["maya"],)), ("unguarded", (ref["ravi"],))}
    assert set(found) == planted | unguarded
    assert set(found.values()) == {1}


# ------------------------------------------------------------------ stopping and resuming


class Crash(Exception):
    """The worker's process dying, as far as the scan can tell."""


def watched(
    ctx: ScanContext,
    after_read: Callable[[int, str], None] = lambda read, stream: None,
    *,
    before_read: Callable[[], None] = lambda: None,
) -> ScanContext:
    """``ctx`` whose readers call ``before_read()`` before each page they read (which may
    raise what a provider's reader raises), and ``after_read(pages read so far, stream)``
    after it, before the scan keeps it."""
    read = 0

    def readers(session: Session, shop_id: uuid.UUID, provider: str) -> HistoryReader:
        reader = ctx.readers(session, shop_id, provider)

        class Watched:
            provider = reader.provider
            streams = reader.streams

            @property
            def requests_per_second(self) -> float:
                return reader.requests_per_second

            def read_page(self, stream: str, *, since: datetime, cursor: str | None) -> HistoryPage:
                nonlocal read
                before_read()
                page = reader.read_page(stream, since=since, cursor=cursor)
                read += 1
                after_read(read, stream)
                return page

        return Watched()

    return replace(ctx, readers=readers)


def crashing_after(pages: int, ctx: ScanContext) -> ScanContext:
    """``ctx`` whose reader dies after reading ``pages`` pages, before the last is kept."""

    def crash(read: int, stream: str) -> None:
        if read == pages:
            raise Crash(f"died after reading page {pages} of {stream}")

    return watched(ctx, crash)


def test_a_scan_that_died_between_reading_a_page_and_keeping_it_resumes_losing_nothing(
    app: Flask, settings: Settings, session: Session, sandbox: StripeSandbox, shop: StripeShop
) -> None:
    seeded = stripe_history(sandbox, shop.account.id, refunds=230)
    scan_id = _connected_scan(shop, session)
    ctx = scan_context(app, settings)

    with pytest.raises(Crash):
        run_scan(crashing_after(3, ctx), scan_id)

    # Two pages of refunds kept, the third read and lost with the process.
    stopped = shop.viewer.get("/api/shop/history-audit").get_json()["scans"][0]
    assert stopped["status"] == "running"
    assert stopped["progress"]["records"] == 200
    refunds = stopped["progress"]["streams"][0]
    assert (refunds["name"], refunds["done"], refunds["pages"]) == ("refunds", False, 2)
    assert 0 < refunds["share"] < 1 and 0 < stopped["progress"]["share"] < 1
    assert stopped["progress"]["seconds_left"] is not None
    reads_before = len(sandbox.received_requests(shop.account.id))

    assert run_scan(ctx, scan_id) == ScanStatus.DONE

    kept = kept_ids(session, scan_id)
    assert len(kept) == len(set(kept)) and set(kept) == seeded.inside
    # The resumed run asked for the lost page again, never for the two kept before it.
    resumed = sandbox.received_requests(shop.account.id)[reads_before:]
    assert [r.path for r in resumed].count("/v1/refunds") == 1


def test_a_scan_read_in_slices_keeps_the_readers_pace_from_one_slice_to_the_next(
    app: Flask, settings: Settings, session: Session, sandbox: StripeSandbox, shop: StripeShop
) -> None:
    stripe_history(sandbox, shop.account.id, refunds=230)
    scan_id = _connected_scan(shop, session)
    moment = utcnow()  # Caseward's clock stands still: only the slices' own clocks move
    starts: list[float] = []
    first, second = SteppedClock(), SteppedClock()
    second.now = 1000.0  # another process's monotonic clock

    def slice_on(clock: SteppedClock) -> ScanContext:
        ctx = replace(
            scan_context(app, settings),
            clock=lambda: moment,
            monotonic=clock.monotonic,
            sleep=clock.sleep,
        )
        return watched(ctx, lambda read, stream: starts.append(clock.now))

    assert run_scan(slice_on(first), scan_id, until=0.05) == ScanStatus.RUNNING
    ended, slice_one = first.now, len(starts)
    assert run_scan(slice_on(second), scan_id) == ScanStatus.DONE

    interval = 1 / (25 * PACE_SHARE)  # Stripe's test-mode reads, at the scan's share
    assert slice_one == 3 and starts[1] - starts[0] >= interval
    # From the first slice's last request to the second's first one: the same pace.
    gap = (ended - starts[slice_one - 1]) + (starts[slice_one] - 1000.0)
    assert gap >= interval


def test_a_worker_killed_mid_scan_leaves_it_for_the_sweeper_which_resumes_it(
    app: Flask,
    settings: Settings,
    session: Session,
    sandbox: StripeSandbox,
    shop: StripeShop,
    redis_url: str,
) -> None:
    seeded = stripe_history(sandbox, shop.account.id)
    # The first read of credits waits inside Stripe until the worker is gone.
    hold = sandbox.arm_fault("hold", method="GET", path="/v1/customers", account=shop.account.id)
    scan_id = _connected_scan(shop, session)  # the web enqueues the scan's job
    worker = WorkerProcess(settings, redis_url)
    try:
        wait_for(
            lambda: any(h.id == hold.id and h.waiting for h in sandbox.holds()),
            timeout=30,
            what="the scan's first read of credits, held",
        )
        worker.kill()
    finally:
        worker.kill()
        sandbox.release_hold(hold.id)
    stopped = the_scan(session, scan_id)
    assert stopped.status == ScanStatus.RUNNING
    assert stopped.streams["refunds"]["done"] and stopped.streams["customer_credits"]["pages"] == 0
    refund_reads = [r.path for r in sandbox.received_requests(shop.account.id)].count("/v1/refunds")

    # Minutes later, the sweeper finds it silent and queues it again; a new worker resumes.
    later = ExecutionContext(
        session_factory=scan_context(app, settings).session_factory,
        adapters=connection_adapters(settings, secret_box(settings)),
        settings=settings,
        clock=lambda: utcnow() + SILENT_AFTER + timedelta(seconds=30),
    )
    queue = queue_named(connect_redis(settings), settings.queue_name)
    assert sweep(later, queue)["resuming_scans"] == [str(scan_id)]
    assert sweep(later, queue)["resuming_scans"] == []  # queued once, whatever the sweeps
    worker = WorkerProcess(settings, redis_url)
    try:
        wait_for(
            lambda: the_scan(session, scan_id).status == ScanStatus.DONE,
            timeout=60,
            what="the resumed scan done",
        )
    finally:
        worker.kill()

    kept = kept_ids(session, scan_id)
    assert len(kept) == len(set(kept)) and set(kept) == seeded.inside
    requests = sandbox.received_requests(shop.account.id)
    assert [r.path for r in requests].count("/v1/refunds") == refund_reads  # not read again
    assert {r.method for r in requests} == {"GET"}


def test_stripe_throttling_the_scan_is_waited_out_and_the_same_page_asked_again(
    app: Flask, settings: Settings, session: Session, sandbox: StripeSandbox, shop: StripeShop
) -> None:
    seeded = stripe_history(sandbox, shop.account.id, refunds=20)
    # Far below the 25 a second the reader says Stripe allows a test-mode key.
    sandbox.set_rate_limits(RateLimits(test_read=3), account=shop.account.id)
    scan_id = _connected_scan(shop, session)

    assert run_scan(scan_context(app, settings), scan_id) == ScanStatus.DONE

    statuses = Counter(r.status for r in sandbox.received_requests(shop.account.id))
    assert statuses[429] > 0 and set(statuses) == {200, 429}
    kept = kept_ids(session, scan_id)
    assert len(kept) == len(set(kept)) and set(kept) == seeded.inside
    assert the_scan(session, scan_id).requests == sum(statuses.values())


def test_a_throttle_the_reader_foresaw_is_waited_out_and_not_counted_as_a_request(
    app: Flask, settings: Settings, session: Session, sandbox: StripeSandbox, shop: StripeShop
) -> None:
    seeded = stripe_history(sandbox, shop.account.id, refunds=5)
    scan_id = _connected_scan(shop, session)
    clock, base = _stepped(app, settings)
    held = 0

    def foreseen() -> None:
        nonlocal held
        if held < 2:  # as Shopify's client does when its bucket is known short
            held += 1
            raise Throttled("the bucket is short", retry_after=3.0, asked=False)

    assert run_scan(watched(base, before_read=foreseen), scan_id) == ScanStatus.DONE

    assert held == 2 and clock.now >= 6.0
    kept = kept_ids(session, scan_id)
    assert set(kept) == seeded.inside
    sent = len(sandbox.received_requests(shop.account.id))
    assert the_scan(session, scan_id).requests == sent


# ------------------------------------------------------------------ re-running, refusals


def test_running_the_audit_again_replaces_the_report_keeping_nothing_of_the_old_one(
    app: Flask, settings: Settings, session: Session, sandbox: StripeSandbox, shop: StripeShop
) -> None:
    seeded = stripe_history(sandbox, shop.account.id, refunds=10)
    first = _connected_scan(shop, session)
    ctx = scan_context(app, settings)
    assert run_scan(ctx, first) == ScanStatus.DONE
    findings = session.scalar(
        select(func.count()).select_from(HistoryFinding).where(HistoryFinding.scan_id == first)
    )
    assert findings  # the refund made twice of one payment, at least

    again = shop.owner.post("/api/shop/history-audit", {"provider": "stripe", "window_days": 90})
    assert again.status_code == 202, again.get_json()
    second = uuid.UUID(again.get_json()["id"])
    # Asked twice while it waits: the same scan, not a second one.
    twice = shop.owner.post("/api/shop/history-audit", {"provider": "stripe"})
    assert uuid.UUID(twice.get_json()["id"]) == second
    assert run_scan(ctx, second) == ScanStatus.DONE

    assert the_scan(session, first).status == ScanStatus.SUPERSEDED
    for table in (HistoryRecord, HistoryFinding):
        left = select(func.count()).select_from(table).where(table.scan_id == first)
        assert session.scalar(left) == 0
    assert set(kept_ids(session, second)) == seeded.inside
    refound = select(func.count()).select_from(HistoryFinding)
    assert session.scalar(refound.where(HistoryFinding.shop_id == shop.shop_id)) == findings
    assert [s.status for s in scans_of(session, shop.shop_id)] == ["superseded", "done"]
    shown = shop.viewer.get("/api/shop/history-audit").get_json()["scans"]
    assert [(s["id"], s["status"]) for s in shown] == [(str(second), "done")]


def test_a_key_stripe_refuses_a_read_ends_the_scan_failed_saying_why(
    app: Flask, settings: Settings, session: Session, sandbox: StripeSandbox
) -> None:
    without_events = {k: v for k, v in STRIPE_READ_ONLY.items() if k != "events"}
    shop = stripe_shop(app, session, sandbox, "no-events", permissions=without_events)
    stripe_history(sandbox, shop.account.id, refunds=5)
    scan_id = _connected_scan(shop, session)

    assert run_scan(scan_context(app, settings), scan_id) == ScanStatus.FAILED

    shown = shop.viewer.get("/api/shop/history-audit").get_json()["scans"][0]
    assert shown["status"] == "failed"
    assert "stripe refused the audit's read" in shown["error"] and "event" in shown["error"]
    failed = session.scalars(
        select(AuditEvent).where(
            AuditEvent.shop_id == shop.shop_id, AuditEvent.kind == "history.scan_failed"
        )
    ).one()
    assert failed.data["scan"] == str(scan_id)
    assert session.scalar(select(func.count()).select_from(HistoryFinding)) == 0


def test_a_scan_no_resume_can_carry_on_ends_failed_saying_why_instead_of_forever(
    app: Flask, settings: Settings, session: Session, sandbox: StripeSandbox, shop: StripeShop
) -> None:
    stripe_history(sandbox, shop.account.id, refunds=5)
    scan_id = _connected_scan(shop, session)
    pages_left = 0  # how many pages the provider answers before it is down again

    def down() -> None:
        nonlocal pages_left
        if pages_left == 0:
            raise ConnectionError("the provider is down")
        pages_left -= 1

    ctx = watched(scan_context(app, settings), before_read=down)

    def resumed(times: int) -> None:
        for _ in range(times):  # the sweeper's resumes, each a failed job
            with pytest.raises(ConnectionError):
                run_scan(ctx, scan_id)

    resumed(MAX_STALLED_RUNS - 1)
    pages_left = 1  # one page answered: the scan is carrying on, the count starts again
    resumed(1)
    resumed(MAX_STALLED_RUNS)
    assert the_scan(session, scan_id).status == ScanStatus.RUNNING
    assert the_scan(session, scan_id).requests == 1

    assert run_scan(ctx, scan_id) == ScanStatus.FAILED
    shown = shop.viewer.get("/api/shop/history-audit").get_json()["scans"][0]
    assert shown["status"] == "failed"
    assert f"after {MAX_STALLED_RUNS} attempts in a row read nothing" in shown["error"]
    failed = session.scalars(
        select(AuditEvent).where(
            AuditEvent.shop_id == shop.shop_id, AuditEvent.kind == "history.scan_failed"
        )
    ).one()
    assert failed.data["scan"] == str(scan_id)
    later = utcnow() + 2 * SILENT_AFTER
    session.expire_all()
    assert scan_id not in {scan.id for scan in scans_to_resume(session, later)}


def test_one_shops_scan_never_reads_or_shows_anothers(
    app: Flask, settings: Settings, session: Session, sandbox: StripeSandbox, shop: StripeShop
) -> None:
    other = stripe_shop(app, session, sandbox, "other")
    seeded = stripe_history(sandbox, shop.account.id, refunds=5)
    theirs = stripe_history(sandbox, other.account.id, refunds=5)
    scan_id = _connected_scan(shop, session)
    other_scan = _connected_scan(other, session)

    assert run_scan(scan_context(app, settings), scan_id) == ScanStatus.DONE

    assert set(kept_ids(session, scan_id)) == seeded.inside
    assert not theirs.inside & set(kept_ids(session, scan_id))
    assert sandbox.received_requests(other.account.id) == []
    shown = other.owner.get("/api/shop/history-audit").get_json()["scans"]
    assert [(s["id"], s["status"]) for s in shown] == [(str(other_scan), "queued")]
    shop_ids = session.scalars(
        select(HistoryRecord.shop_id).where(HistoryRecord.scan_id == scan_id).distinct()
    )
    assert list(shop_ids) == [shop.shop_id]


# ------------------------------------------------------------------ the API's refusals


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "provider"),
        ({"provider": "paypal"}, "provider"),
        ({"provider": "stripe", "window_days": 0}, "window_days"),
        ({"provider": "stripe", "window_days": 366}, "window_days"),
        ({"provider": "stripe", "window_days": "90"}, "window_days"),
        ({"provider": "stripe", "window_days": 30.5}, "window_days"),
        ({"provider": "stripe", "window_days": True}, "window_days"),
        ({"provider": "stripe", "since": "2026-01-01"}, "since"),
    ],
)
def test_starting_a_scan_refuses_bad_input_naming_the_field(
    shop: StripeShop, body: dict[str, object], field: str
) -> None:
    answer = shop.owner.post("/api/shop/history-audit", body)
    assert answer.status_code == 400, answer.get_json()
    assert answer.get_json()["error"]["field"] == field


def test_only_owners_start_a_scan_and_only_of_a_connected_provider(
    session: Session, shop: StripeShop
) -> None:
    for member in (shop.viewer, shop.approver):
        answer = member.post("/api/shop/history-audit", {"provider": "stripe"})
        assert answer.status_code == 403, answer.get_json()
        assert answer.get_json()["error"]["code"] == "role_not_allowed"
    not_yet = shop.owner.post("/api/shop/history-audit", {"provider": "stripe"})
    assert not_yet.status_code == 403
    assert not_yet.get_json()["error"]["code"] == "not_connected"
    shop.connect()
    shopify = shop.owner.post("/api/shop/history-audit", {"provider": "shopify"})
    assert shopify.get_json()["error"]["code"] == "not_connected"
    assert [s.provider for s in scans_of(session, shop.shop_id)] == ["stripe"]


def test_the_pacer_never_starts_requests_closer_than_the_rate_allows() -> None:
    clock = SteppedClock()
    starts: list[float] = []
    rates = iter([4.0, 4.0, 4.0, 2.0, 2.0])
    pacer = Pacer(lambda: next(rates), monotonic=clock.monotonic, sleep=clock.sleep)

    for _ in range(3):
        pacer.wait()
        starts.append(clock.now)
    pacer.hold_off(2.0)  # the provider asked for two seconds
    pacer.wait()
    starts.append(clock.now)
    pacer.wait()  # the reader's rate fell to 2 a second
    starts.append(clock.now)

    assert starts == [0.0, 0.25, 0.5, 2.5, 3.0]


def test_a_wait_for_shopifys_bucket_is_spent_off_the_worker_by_scheduling_the_next_slice(
    app: Flask,
    client: FlaskClient,
    settings: Settings,
    session: Session,
    shopify: ShopifySandbox,
) -> None:
    store = _store(shopify, "slow")
    shopify_history(shopify, store.domain, refunds=5)
    scan = _installed_scan(client, session, shopify, store.domain)
    clock, ctx = _stepped(app, settings)
    # Other apps of the shop have drained its query-cost bucket.
    shopify.set_available_cost(store.domain, 0)

    # A slice of the job: one query, throttled; the refill takes ten seconds, so it ends.
    assert run_scan(ctx, scan.id, until=SLICE_SECONDS) == ScanStatus.RUNNING
    assert len(shopify.received_operations(store.domain)) == 1 and clock.now == 0.0

    stopped = the_scan(session, scan.id)
    assert stopped.requests == 1 and stopped.streams["refunds"]["pages"] == 0
    assert stopped.not_before is not None and stopped.heartbeat_at is not None
    waited = stopped.not_before - stopped.heartbeat_at
    assert waited > timedelta(seconds=LONG_WAIT)
    queue = queue_named(connect_redis(settings), settings.background_queue_name)
    assert enqueue_scan(queue, stopped) and not enqueue_scan(queue, stopped)
    scheduled = ScheduledJobRegistry(queue=queue)
    assert scheduled.get_job_ids() == [scan_job_id(stopped)]
    due = scheduled.get_scheduled_time(scan_job_id(stopped))
    assert abs(due - (stopped.not_before - SCHEDULER_LEAD)) < timedelta(seconds=1)

    # Started by the scheduler, the next slice waits out the rest of the refill itself,
    # reads the history to its end, and its first page took the whole wait.
    shopify.set_available_cost(store.domain, 2_000)  # the bucket refilled meanwhile
    later = SteppedClock()
    started = stopped.not_before - SCHEDULER_LEAD
    ctx = replace(ctx, clock=lambda: started, monotonic=later.monotonic, sleep=later.sleep)
    assert run_scan(ctx, scan.id, until=SLICE_SECONDS) == ScanStatus.DONE
    refunds = the_scan(session, scan.id).streams["refunds"]
    assert later.now >= SCHEDULER_LEAD.total_seconds()
    assert refunds["seconds"] >= waited.total_seconds()
