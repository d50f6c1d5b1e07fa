"""Benchmark: Stripe's webhooks acknowledged at a steady rate, none lost, none acted on twice.

    .venv/bin/python tests/benchmarks/bench_money_path.py --only webhooks [--webhook-rate 200]
        [--webhook-seconds 60]

The web app is served by gunicorn with Caseward's config, on the database and Redis of
``bench_money_path``, with a shop whose Stripe connection has a webhook signing secret and
a few approved refunds. Signed ``refund.updated`` events arrive at ``--webhook-rate`` a
second for ``--webhook-seconds``, sent on schedule from a pool of client threads, each on
its own kept-alive connection as Stripe's deliveries come, through the standard library's
HTTP client, the lightest at hand (the sender shares the CPU it measures): one in ten
names one of the shop's actions in its metadata (its refresh is queued, no worker runs),
and one in twenty is a redelivery of an event already sent. It prints the latency of the
acknowledgements as the client saw them (p50, p99, max), how late the sends started, and
then checks from the database and the queue that every event was kept once and every
refresh queued once.
"""

from __future__ import annotations

import json
import statistics
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from http.client import HTTPConnection
from urllib.parse import urlsplit

from bench_money_path import (
    Bench,
    approved,
    build,
    percentile,
    sandbox_process,
    web_process,
    worker_env,
)
from benchmarks.figures import record
from sqlalchemy import func, select

from app.connections.models import Connection
from app.execution.models import ProviderEvent
from app.jobs.connection import connect_redis
from app.jobs.queueing import queue_named
from app.settings import Settings
from integrations.stripe.sandbox.webhooks import signature_header

WEBHOOK_SECRET = "whsec_benchmark_webhooks_0123456789abcdef"
# Of the events sent: those naming one of the shop's actions, and redeliveries.
OURS_EVERY = 10
REDELIVERED_EVERY = 20
CLIENTS = 32


@dataclass(frozen=True)
class Delivery:
    event_id: str
    body: str
    action_id: str | None


def deliveries(count: int, action_ids: list[str]) -> list[Delivery]:
    """``count`` deliveries of ``refund.updated`` events, some naming our actions, some
    sent again."""
    made: list[Delivery] = []
    for number in range(count):
        if number % REDELIVERED_EVERY == REDELIVERED_EVERY - 1 and made:
            made.append(made[number // 2])  # a redelivery of an earlier event
            continue
        action_id = action_ids[number % len(action_ids)] if number % OURS_EVERY == 0 else None
        event_id = f"evt_bench{uuid.uuid4().hex[:20]}"
        refund = {
            "id": f"re_bench{uuid.uuid4().hex[:20]}",
            "object": "refund",
            "amount": 4800,
            "currency": "usd",
            "status": "succeeded",
            "metadata": {"caseward_action_id": action_id} if action_id else {},
        }
        body = {
            "id": event_id,
            "object": "event",
            "api_version": "2025-08-27.basil",
            "created": int(time.time()),
            "livemode": False,
            "pending_webhooks": 1,
            "type": "refund.updated",
            "data": {"object": refund},
        }
        made.append(Delivery(event_id, json.dumps(body), action_id))
    return made


def webhook_figures(settings: Settings, *, rate: int, seconds: int) -> None:
    with sandbox_process() as sandbox:
        bench = build(replace(settings, stripe_api_base=sandbox.url), sandbox, WEBHOOK_SECRET)
        action_ids = [str(action_id) for action_id in approved(bench, 20)]
        with bench.session_factory() as session:
            connection_id = session.scalar(
                select(Connection.id).where(Connection.shop_id == bench.shop.id)
            )
        todo = deliveries(rate * seconds, action_ids)
        env = worker_env(bench.settings, STRIPE_API_BASE=sandbox.url)
        with web_process(env) as web:
            url = f"{web}/webhooks/stripe/{connection_id}"
            latencies, late, failures = _send_on_schedule(url, todo, rate)
        _print(rate, seconds, latencies, late, failures)
        _check_once(bench, todo, action_ids)
    record(
        "webhooks",
        {
            "rate_per_second": rate,
            "seconds": seconds,
            "deliveries": len(latencies),
            "acknowledged_ms": {
                f"p{point:g}": round(percentile(latencies, point / 100) * 1000, 2)
                for point in (50, 90, 95, 99, 99.9)
            }
            | {"max": round(max(latencies) * 1000, 2)},
            "sends_late_p99_ms": round(percentile(late, 0.99) * 1000, 2),
            "not_answered_200": len(failures),
        },
    )


def _send_on_schedule(
    url: str, todo: list[Delivery], rate: int
) -> tuple[list[float], list[float], list[str]]:
    """Send delivery ``n`` at ``n / rate`` seconds from the start; the latency of each
    acknowledgement from its send, and how late each send started."""
    local = threading.local()
    latencies: list[float] = []
    late: list[float] = []
    failures: list[str] = []
    start = time.perf_counter() + 0.5

    address = urlsplit(url)

    def send(number: int, delivery: Delivery) -> None:
        # The standard library's client: the sender's own CPU is taken from what it times.
        client = getattr(local, "client", None)
        if client is None:
            client = local.client = HTTPConnection(address.hostname, address.port, timeout=30)
        due = start + number / rate
        wait = due - time.perf_counter()
        if wait > 0:
            time.sleep(wait)
        headers = {
            "Content-Type": "application/json",
            "Stripe-Signature": signature_header(delivery.body, WEBHOOK_SECRET, int(time.time())),
        }
        sent = time.perf_counter()
        client.request("POST", address.path, body=delivery.body.encode(), headers=headers)
        response = client.getresponse()
        answer = response.read()
        answered = time.perf_counter()
        latencies.append(answered - sent)
        late.append(max(sent - due, 0.0))
        if response.status != 200:
            failures.append(f"{response.status} {answer[:100]!r}")

    with ThreadPoolExecutor(max_workers=CLIENTS) as pool:
        for future in [pool.submit(send, n, d) for n, d in enumerate(todo)]:
            future.result()
    return latencies, late, failures


def _print(
    rate: int, seconds: int, latencies: list[float], late: list[float], failures: list[str]
) -> None:
    ms = 1000
    print(
        f"Stripe webhooks at {rate}/s for {seconds} s ({len(latencies):,} deliveries, gunicorn): "
        f"acknowledged p50 {statistics.median(latencies) * ms:.1f} ms, "
        f"p99 {percentile(latencies, 0.99) * ms:.1f} ms, max {max(latencies) * ms:.1f} ms; "
        f"sends started late by p99 {percentile(late, 0.99) * ms:.1f} ms; "
        f"{len(failures)} not answered 200"
    )
    if failures:
        raise RuntimeError(f"deliveries refused: {failures[:3]}")


def _check_once(bench: Bench, todo: list[Delivery], action_ids: list[str]) -> None:
    """Every event kept once; every refresh queued once (job ids name action and event)."""
    distinct = {delivery.event_id for delivery in todo}
    with bench.session_factory() as session:
        kept = session.scalar(
            select(func.count())
            .select_from(ProviderEvent)
            .where(ProviderEvent.shop_id == bench.shop.id)
        )
    queue = queue_named(
        connect_redis(bench.settings),
        bench.settings.queue_name,
    )
    refreshes = [job_id for job_id in queue.job_ids if job_id.startswith("refresh-")]
    wanted = {
        f"refresh-{delivery.action_id}-{delivery.event_id}"
        for delivery in todo
        if delivery.action_id is not None
    }
    if kept != len(distinct) or sorted(refreshes) != sorted(wanted):
        raise RuntimeError(
            f"{len(distinct)} events kept {kept} times; "
            f"{len(wanted)} refreshes queued as {len(refreshes)} jobs"
        )
    print(
        f"  every event kept once ({kept:,} of {len(todo):,} deliveries, the rest redeliveries), "
        f"every refresh queued once ({len(refreshes)} for {len(action_ids)} actions)"
    )
