"""Benchmark: the read-only audit's scan of a long history, at the providers' rate limits.

    .venv/bin/python tests/benchmarks/bench_money_path.py --only history [--records 10000]

For each provider, the sandbox runs as its own process with its rate limit on (Stripe:
test mode's 25 reads a second, 429 past them; Shopify: each shop's query-cost bucket,
2,000 points refilled at 100 a second, ``THROTTLED`` past it), on the database and Redis
of ``bench_money_path``. A shop's history is seeded in one control call, spread over the
audit's window (Stripe: 90 days; Shopify: 59, the orders an app without
``read_all_orders`` may list), then the scan is queued as connecting the provider queues
it and run by a real worker process, as in production (slices of 30 s on the background
queue; a wait for a slow pace scheduled off the worker). It prints, at 1,000 records and
at ``--records``:

* records kept, the scan's wall time (started to finished, as the database has them) and
  records a second;
* how much of the provider's limit the scan used a second, next to what the limit allows,
  as a percentage: at Stripe, read requests against the key's 25 a second; at Shopify,
  query-cost points used (what answers really cost, as the shop's bucket counts them)
  against the bucket's refill of 100 a second; and how many requests the provider turned
  away (Stripe's 429s, Shopify's ``THROTTLED`` answers);
* the worker process's peak resident memory (``VmHWM``) once started and after the scan:
  a scan keeps each page and lets it go, so the peak must not grow with the history.
"""

from __future__ import annotations

import subprocess
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

from bench_money_path import Sandbox, sandbox_process, worker_env, worker_process
from bench_shopify import API_KEY, API_SECRET, install
from benchmarks.figures import record
from sqlalchemy.orm import Session, sessionmaker

from app.actors import Surface, staff, system_actor
from app.clock import utcnow
from app.connections.service import save_stripe_connection
from app.crypto import SecretBox
from app.db import make_engine, make_session_factory
from app.history_audit.jobs import enqueue_scan
from app.history_audit.models import HistoryScan, ScanStatus
from app.history_audit.scan import start_scan
from app.jobs.connection import connect_redis
from app.jobs.queueing import queue_named
from app.settings import Settings
from app.shops.models import Shop, StaffMember, StaffRole
from integrations.stripe import seeding
from integrations.stripe.history import TEST_READS_PER_SECOND

# Caseward starting the scan as connecting a provider does.
BENCH = system_actor("benchmark", Surface.CONSOLE)
OWNER = "bench.owner"
STRIPE_READ_ONLY = {
    "refunds": "read",
    "charges": "read",
    "customers": "read",
    "coupons": "read",
    "promotion_codes": "read",
    "subscriptions": "read",
    "events": "read",
}
# A shop's history: mostly refunds, then credits and discounts, a few subscriptions.
STRIPE_MIX = {
    "refund": 0.6,
    "customer_credit": 0.15,
    "discount": 0.15,
    "subscription_cancel": 0.06,
    "subscription_change": 0.04,
}
DAY = timedelta(days=1)


@dataclass(frozen=True)
class ScanFigures:
    records: int
    seconds: float
    requests: int
    # How much of the provider's limit the scan used (requests, or cost points), and
    # how much of it the provider allows a second.
    used: float
    unit: str
    refused: int
    allowed_per_second: float
    memory_started: int
    memory_peak: int

    @property
    def records_per_second(self) -> float:
        return self.records / self.seconds

    @property
    def used_per_second(self) -> float:
        return self.used / self.seconds


@dataclass(frozen=True)
class LimitUsage:
    """What the sandbox counted of the scan's use of the provider's limit."""

    requests: int
    used: float
    refused: int


def peak_memory(pid: int) -> int:
    """The process's peak resident memory so far, in bytes (Linux's ``VmHWM``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM: peak memory is read from Linux's /proc")


@contextmanager
def scan_worker(env: dict[str, str], queue_name: str) -> Iterator[subprocess.Popen[bytes]]:
    """One worker process on the background queue with its scheduler, as
    ``python -m app.background worker`` runs it (the scheduler runs the slices a slow
    provider's pace delays)."""
    process = worker_process(env, queue_name)
    try:
        yield process
    finally:
        process.terminate()
        process.wait(timeout=20)


def scanned(
    settings: Settings,
    factory: sessionmaker[Session],
    shop_id: uuid.UUID,
    provider: str,
    env: dict[str, str],
    usage: Callable[[], LimitUsage],
    unit: str,
    allowed_per_second: float,
) -> ScanFigures:
    """Queue a scan of the shop's ``provider`` and let a fresh worker process run it."""
    with factory() as session:
        shop = session.get(Shop, shop_id)
        assert shop is not None
        scan = start_scan(session, shop=shop, provider=provider, actor=BENCH, now=utcnow())
        session.commit()
        scan_id = scan.id
        queue = queue_named(connect_redis(settings), settings.background_queue_name)
        with scan_worker(env, settings.background_queue_name) as worker:
            time.sleep(3.0)  # the worker imports the app and opens its pool before the scan
            memory_started = peak_memory(worker.pid)
            enqueue_scan(queue, scan)
            while True:
                session.expire_all()
                done = session.get(HistoryScan, scan_id)
                assert done is not None
                if done.status not in (ScanStatus.QUEUED, ScanStatus.RUNNING):
                    break
                time.sleep(0.2)
            memory_peak = peak_memory(worker.pid)
        if done.status != ScanStatus.DONE:
            raise RuntimeError(f"the scan ended {done.status}: {done.error}")
        assert done.started_at is not None and done.finished_at is not None
        used = usage()
        return ScanFigures(
            records=sum(stream["records"] for stream in done.streams.values()),
            seconds=(done.finished_at - done.started_at).total_seconds(),
            requests=used.requests,
            used=used.used,
            unit=unit,
            refused=used.refused,
            allowed_per_second=allowed_per_second,
            memory_started=memory_started,
            memory_peak=memory_peak,
        )


# ------------------------------------------------------------------ Stripe


def stripe_scan(settings: Settings, sandbox: Sandbox, records: int) -> ScanFigures:
    account = sandbox.control(
        "POST", "/accounts", {"restricted_keys": [{"permissions": STRIPE_READ_ONLY}]}
    )
    now = utcnow()
    counts = {kind: round(records * share) for kind, share in STRIPE_MIX.items()}
    counts["refund"] += records - sum(counts.values())
    history = seeding.spread_history(counts, start=now - 89 * DAY, end=now - DAY / 24)
    seeding.seed_history(sandbox.url, sandbox.token, account["id"], history)
    box = SecretBox(list(settings.encryption_keys))
    factory = make_session_factory(make_engine(settings.database_url))
    with factory() as session:
        shop = Shop(domain=f"history-{uuid.uuid4().hex[:6]}.myshopify.com", name="History")
        session.add(shop)
        session.flush()
        session.add(StaffMember(shop_id=shop.id, user_id=OWNER, role=StaffRole.OWNER))
        session.flush()
        save_stripe_connection(
            session,
            shop=shop,
            actor=staff(OWNER, Surface.CONSOLE),
            api_key=account["restricted_keys"][0]["key"],
            livemode=False,
            webhook_secret="whsec_benchmark_history_0123456789",
            box=box,
            now=now,
        )
        session.commit()
        shop_id = shop.id

    def usage() -> LimitUsage:
        """What Stripe answered the account's API requests (the scan's only ones)."""
        requests = sandbox.control("GET", f"/accounts/{account['id']}/requests")
        statuses = Counter(request["status"] for request in requests)
        sent = sum(statuses.values())
        return LimitUsage(requests=sent, used=sent, refused=statuses[429])

    env = worker_env(settings, STRIPE_API_BASE=sandbox.url)
    return scanned(
        settings, factory, shop_id, "stripe", env, usage, "requests", TEST_READS_PER_SECOND
    )


# ------------------------------------------------------------------ Shopify


def shopify_scan(settings: Settings, sandbox: Sandbox, records: int) -> ScanFigures:
    bench = install(settings, sandbox)
    now = time.time()
    sandbox.control(
        "POST",
        f"/shops/{bench.domain}/history",
        {"generate": {"records": records, "start": now - 59 * 86400, "end": now - 3600}},
    )

    def graphql_requests() -> int:
        requests = sandbox.control("GET", f"/shops/{bench.domain}/requests")
        return sum(1 for r in requests if r["path"].endswith("/graphql.json"))

    def bucket() -> dict[str, float]:
        return sandbox.control("GET", f"/shops/{bench.domain}/cost_bucket")

    installed_requests, installed = graphql_requests(), bucket()

    def usage() -> LimitUsage:
        """The shop's GraphQL requests and cost points since it was installed (the
        scan's only ones)."""
        used = bucket()
        return LimitUsage(
            requests=graphql_requests() - installed_requests,
            used=used["spent"] - installed["spent"],
            refused=int(used["refused"] - installed["refused"]),
        )

    env = worker_env(
        settings,
        SHOPIFY_API_KEY=API_KEY,
        SHOPIFY_API_SECRET=API_SECRET,
        SHOPIFY_API_BASE=sandbox.url,
    )
    restore_rate = installed["restore_rate"]
    factory = make_session_factory(make_engine(settings.database_url))
    figures = scanned(
        settings, factory, bench.shop_id, "shopify", env, usage, "points", restore_rate
    )
    bench.auth.close()
    return figures


# ------------------------------------------------------------------ the figures


def history_figures(settings: Settings, *, records: int) -> None:
    settings = replace(
        settings,
        encryption_keys=(SecretBox.generate_key(),),
        background_queue_name=f"caseward-bench-history-{uuid.uuid4().hex[:6]}",
    )
    print(
        "history scans at the providers' rate limits, sandboxes as processes, "
        "one worker process per scan"
    )
    print(
        f"{'provider':>8} | {'records':>7} | {'wall time':>9} | {'records/s':>9} | "
        f"{'requests':>8} | {'limit used a second (allowed, share)':>38} | {'refused':>7} | "
        "peak memory (MB): started, scan"
    )
    sizes = sorted({min(1_000, records), records})
    scans: list[dict[str, Any]] = []
    with sandbox_process("stripe") as sandbox:
        sandbox.control("POST", "/rate_limits", {"limits": "stripe"})
        for size in sizes:
            scans.append(_print("stripe", stripe_scan(settings, sandbox, size)))
    with sandbox_process("shopify", "--api-key", API_KEY, "--api-secret", API_SECRET) as sandbox:
        shopify_settings = replace(
            settings,
            shopify_api_key=API_KEY,
            shopify_api_secret=API_SECRET,
            shopify_api_base=sandbox.url,
        )
        for size in sizes:
            scans.append(_print("shopify", shopify_scan(shopify_settings, sandbox, size)))
    record("history", {"scans": scans})


def _print(provider: str, figures: ScanFigures) -> dict[str, Any]:
    """Print one scan's row; its figures, as kept for the docs."""
    share = figures.used_per_second / figures.allowed_per_second
    megabyte = 1024 * 1024
    used = f"{figures.used_per_second:.2f} {figures.unit}"
    print(
        f"{provider:>8} | {figures.records:>7,} | {figures.seconds:>7.1f} s | "
        f"{figures.records_per_second:>9.1f} | {figures.requests:>8,} | "
        f"{used:>16} ({figures.allowed_per_second:6.2f}, {share:6.1%}) | "
        f"{figures.refused:>7} | {figures.memory_started / megabyte:6.1f}, "
        f"{figures.memory_peak / megabyte:6.1f}",
        flush=True,
    )
    return {
        "provider": provider,
        "records": figures.records,
        "seconds": round(figures.seconds, 1),
        "records_per_second": round(figures.records_per_second, 2),
        "requests": figures.requests,
        "unit": figures.unit,
        "used_per_second": round(figures.used_per_second, 2),
        "allowed_per_second": round(figures.allowed_per_second, 2),
        "refused": figures.refused,
        "peak_memory_mb": round(figures.memory_peak / megabyte, 1),
    }
