"""Benchmark: drafting, from a shopper's chat message to the reply kept, and what prompt
caching saves per drafted case.

    .venv/bin/python tests/benchmarks/bench_money_path.py --only drafting [--chats 40]
        [--chat-burst 25] [--drafts 50]

Runs the web app as production serves it (gunicorn with Caseward's config), real RQ worker
processes on the money queue then the background queue (as ``python -m
app.background worker`` runs them), and the Anthropic sandbox as its own process, on the
database and Redis of ``bench_money_path``. The sequence:

1. start the Anthropic sandbox on a free port and read its ``KEY=value`` lines;
2. seed a storefront shop (ORM inserts): customers known by their Shopify id, each with one
   to three orders on their way (a carrier, a tracking number, a delivery estimate);
3. for each drafter, the offline rules (no ``ANTHROPIC_API_KEY``) and Claude on the real
   ``anthropic`` SDK against the sandbox, whose model answers a valid ``record_case_draft``
   input (next step "answer", :func:`scripted_draft`) after 1.5 s:

   * latency: ``--chats`` messages, one at a time with one worker listening, each from a
     signed-in shopper asking where one of their orders is, POSTed to the web app's
     ``/proxy/chat/messages`` as Shopify's app proxy forwards the storefront chat's request
     (its query signed with the app's secret); the web keeps the message owed a draft,
     commits and queues the drafting job; a worker drafts the case and keeps the reply. The
     message's time runs from the POST to the job's end once the reply has committed (RQ's
     ``ended_at``), split by the clocks that saw each step: the POST's 201, RQ's
     ``started_at``, and the sandbox's log of when the model's request arrived and was
     answered;
   * drafts per second: for 1, 2 and 4 workers, ``--chat-burst`` messages per worker (and
     one more each) POSTed with no worker listening and their jobs taken off the queue
     (RQ's ``remove``); the workers started; once every one of them listens (RQ marks it
     idle), one job each, untimed: a process's first job pays for what it loads on first
     use (lazy imports, its first queries); once all listen again, the others put back at
     once (``push_job_id``). A worker's rate is its drafts over its first job's start to
     its last job's end; the workers' together, all the drafts over the first start to
     the last end;

   the bench waits for each job on Redis (RQ's blocking read of its result), taking no CPU
   from what it times, then checks from the database that every message has its reply kept
   (a Caseward-authored message in its conversation) and from RQ that every job drafted an
   answer;
4. tokens per drafted case, with the sandbox answering at once. Three runs over the same
   ``--drafts`` briefs:

   * as shipped: :class:`~app.drafting.drafters.ClaudeDrafter`, the instructions and the
     shop's policy marked for the prompt cache, cases drafted back to back (the cache
     written by the first, read by the rest);
   * as shipped, cache expired: the same, with the sandbox clock moved six minutes before
     each draft, so every case finds the 5-minute cache gone (a quiet shop);
   * caching off: the same request built here through
     :func:`~integrations.anthropic.messages.ask_with_tool` with no block cached;

   one untimed uncached request first, so every run finds the SDK's connection open. It
   prints, per mode and drafted case, the mean tokens of each kind the usage reports, the
   input side billed-equivalent, and p50/p95 wall time per call, then the saving caching
   gives.

Every request goes to 127.0.0.1: the worker processes get the sandbox's URL and key, or no
key at all (the offline rules), whatever the environment holds. Not measured: Shopify's app
proxy in front of the web app, the widget's polling for the reply (every 5 s while its panel
is open), and a drafted money step (a proposal checks the provider's fresh facts: the money
path's figures). Token counts are the sandbox's estimate (four characters a token), not
Anthropic's tokenizer; the cache follows Anthropic's rules (tools, then system, then
messages; a prefix under 1,024 tokens is never cached).
"""

from __future__ import annotations

import http.client
import json
import random
import statistics
import subprocess
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from bench_money_path import (
    REPO,
    RESULT_WAIT,
    WARM_UP,
    Sandbox,
    _unix,
    ended,
    percentile,
    web_process,
    worker_env,
    workers,
)
from benchmarks.figures import record
from redis import Redis as RedisClient
from rq import Queue, Worker
from rq.job import Job, JobStatus
from shopify_support import signed_proxy_query
from sqlalchemy import distinct, func, select
from sqlalchemy.orm import Session, sessionmaker

from app.cases.models import Customer, Order
from app.conversations.linking import link_order
from app.conversations.models import Author, Message
from app.db import make_engine, make_session_factory
from app.drafting.brief import CaseBrief, LineBrief, MessageBrief, OrderBrief, ShipmentBrief
from app.drafting.drafters import MAX_TOKENS, ClaudeDrafter
from app.drafting.prompt import (
    INSTRUCTIONS,
    TOOL_DESCRIPTION,
    TOOL_NAME,
    case_message,
    policy_text,
)
from app.drafting.result import DRAFT_SCHEMA, NextStep, parse_draft
from app.settings import Settings
from app.shops.models import Shop, StaffMember, StaffRole
from integrations.anthropic.messages import SystemBlock, ToolSpec, Usage, ask_with_tool

MODEL = "claude-sonnet-4-5"
TIMEOUT_SECONDS = 10.0
SHOP_NAME = "Fern & Fold Linens"
# The policy lines app.drafting.service.brief_for writes for a shop allowing refunds
# (medium identity) and store credit (strong), within 30 days.
POLICY_LINES = (
    "A refund needs the customer verified at level medium or above.",
    "A customer_credit needs the customer verified at level strong or above.",
    "Refunds within 30 days of delivery (or fulfilment).",
)
# Anthropic's published prices for 5-minute prompt caching, as multiples of the base
# input price: writing the cache costs 1.25x, reading it 0.1x.
CACHE_WRITE_MULTIPLIER = 1.25
CACHE_READ_MULTIPLIER = 0.1
# Past the 5-minute lifetime of an ephemeral cache entry.
QUIET_SECONDS = 6 * 60
# How long the sandbox's model takes to answer in the chat runs.
MODEL_SECONDS = 1.5
WORKER_COUNTS = (1, 2, 4)
# The Shopify app's credentials the web app verifies the app proxy's signature with: made
# up for the benchmark.
APP_KEY = "caseward-bench-client-id"
APP_SECRET = "shpss_caseward_bench_app_secret_0123456789"


def billed_input(usage: Usage) -> float:
    """Input-side tokens at the base input price that ``usage`` costs."""
    return (
        usage.input_tokens
        + CACHE_WRITE_MULTIPLIER * usage.cache_creation_input_tokens
        + CACHE_READ_MULTIPLIER * usage.cache_read_input_tokens
    )


# ------------------------------------------------------------------ the model's answer


def scripted_draft() -> dict[str, Any]:
    """The ``record_case_draft`` input the sandbox's model answers: next step "answer",
    words that only acknowledge, and the order's shipment told in Caseward's words."""
    return {
        "summary": "The customer asks where their order is; the shipment facts answer it.",
        "next_step": NextStep.ANSWER.value,
        "tell": ["shipment"],
        "free_text": "Thanks for getting in touch, and sorry for the wait.",
    }


# ------------------------------------------------------------------ the sandbox


@contextmanager
def anthropic_sandbox() -> Iterator[tuple[Sandbox, str]]:
    """``python -m integrations.anthropic.sandbox`` on a free port; its control handle
    and the API key it accepts."""
    process = subprocess.Popen(
        [sys.executable, "-m", "integrations.anthropic.sandbox", "--port", "0"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdout is not None
    values: dict[str, str] = {}
    while "ANTHROPIC_SANDBOX_API_KEY" not in values:
        line = process.stdout.readline().decode().strip()
        if not line:
            process.kill()
            raise RuntimeError("the Anthropic sandbox did not start")
        key, _, value = line.partition("=")
        values[key] = value
    try:
        sandbox = Sandbox(
            values["ANTHROPIC_SANDBOX_URL"], values["ANTHROPIC_SANDBOX_CONTROL_TOKEN"], process
        )
        yield sandbox, values["ANTHROPIC_SANDBOX_API_KEY"]
    finally:
        process.terminate()
        process.wait(timeout=10)


def answering(sandbox: Sandbox, *, after_seconds: float) -> None:
    """Every request from now on answered :func:`scripted_draft`, after ``after_seconds``."""
    answer: dict[str, Any] = {"kind": "tool_use", "input": scripted_draft()}
    if after_seconds:
        answer = {"kind": "slow", "seconds": after_seconds, "then": answer}
    sandbox.control("POST", "/answers/default", {"answer": answer})


# ------------------------------------------------------------------ the cases

# What the shop sells: title and unit price in cents.
CATALOGUE = (
    ("Linen apron, natural", 2400),
    ("Linen apron, charcoal", 2400),
    ("Tea towel set of three", 1800),
    ("Stonewashed duvet cover, queen", 18900),
    ("Pillowcase pair, sage", 4200),
    ("Waffle bath towel", 3400),
    ("Table runner, oat", 3900),
    ("Napkins, set of four", 2800),
)
SHIPPING = 800  # cents, on every order
CARRIERS = ("UPS", "USPS", "FedEx")

# The customer's message, by what they want ({order}: one of their order names, {item}:
# a title from it), and whether that order has arrived by then (None: either).
MESSAGES = (
    (
        "Hi there, I ordered the {item} about a week ago ({order}) and the tracking has not "
        "moved since Monday. Could you tell me where it is? I need it before the weekend.",
        False,
    ),
    (
        "Hello! My order {order} arrived yesterday, but the {item} has a small tear along "
        "the hem. I love everything else. What can you do about the torn one? I can send "
        "photos.",
        True,
    ),
    (
        "Good morning. I think I was sent the wrong colour: I picked the {item} and the one "
        "in the box is different. Order {order}. Can I swap it, or should I send it back "
        "first?",
        True,
    ),
    (
        "Hi, quick question about the {item}. Is it fine to tumble dry, or will it shrink? "
        "The label is in a language I can't read. Thanks so much!",
        None,
    ),
    (
        "Hello, I would like to return the {item} from my last order. It's unused and still "
        "in its packaging, it just doesn't suit our kitchen. How do I go about that?",
        True,
    ),
    (
        "Hey, I placed two orders this month and only one has arrived. The {item} is the "
        "one I'm still waiting for. Could you check on it for me? My email is the one on "
        "file.",
        False,
    ),
)
# An order is delivered a week after it is placed.
DELIVERY_DAYS = 7


def case_briefs(count: int) -> list[CaseBrief]:
    """``count`` briefs of verified customers of one shop, as brief_for builds them:
    one to three orders each, the order linked from the message when it names one."""
    picker = random.Random(20_260_101)
    numbers = iter(range(1001, 1001 + 3 * count))
    today = datetime(2026, 3, 2, tzinfo=UTC)
    briefs = []
    for _ in range(count):
        orders = [
            _order(picker, f"#{next(numbers)}", today - timedelta(days=picker.randint(2, 40)))
            for _ in range(picker.randint(1, 3))
        ]
        about = picker.choice(orders)
        words, arrived = picker.choice(MESSAGES)
        if arrived is not None:
            days = picker.randint(10, 25) if arrived else picker.randint(2, DELIVERY_DAYS - 1)
            about.created_at = today - timedelta(days=days)
        text = words.format(order=about.name, item=picker.choice(about.lines)["title"])
        linking = link_order([text], orders)
        briefs.append(
            CaseBrief(
                shop_name=SHOP_NAME,
                verified=True,
                identity_level="medium",
                kinds_allowed=("refund", "customer_credit"),
                policy_lines=POLICY_LINES,
                messages=(MessageBrief("customer", text),),
                orders=tuple(_order_brief(picker, order, today) for order in orders),
                picked_order=linking.picked.name if linking.picked else None,
                unmatched=linking.unmatched,
            )
        )
    return briefs


def _order(picker: random.Random, name: str, placed: datetime) -> Order:
    """An unsaved order of one to three catalogue lines, paid through Stripe."""
    lines: list[dict[str, Any]] = []
    for index, (title, price) in enumerate(picker.sample(CATALOGUE, picker.randint(1, 3))):
        quantity = picker.randint(1, 3)
        lines.append(
            {
                "id": f"gid://shopify/LineItem/{name.lstrip('#')}{index}",
                "title": title,
                "quantity": quantity,
                "paid": price * quantity,
            }
        )
    return Order(
        id=uuid.uuid4(),
        name=name,
        currency="usd",
        total=sum(line["paid"] for line in lines) + SHIPPING,
        payment_provider="stripe",
        payment_id=f"pi_bench_{name.lstrip('#')}",
        lines=lines,
        created_at=placed,
    )


def _order_brief(picker: random.Random, order: Order, today: datetime) -> OrderBrief:
    placed = order.created_at
    delivered = (today - placed).days >= DELIVERY_DAYS
    shipment = None
    if not delivered:
        shipment = ShipmentBrief(
            status="in_transit",
            carrier=picker.choice(CARRIERS),
            tracking_number=f"{picker.randrange(10**12):012d}",
            estimated_delivery=(today + timedelta(days=picker.randint(1, 4))).date().isoformat(),
        )
    return OrderBrief(
        name=order.name,
        currency=order.currency,
        total=order.total,
        placed_on=placed.date().isoformat(),
        lines=tuple(
            LineBrief(line["id"], line["title"], line["quantity"], line["paid"])
            for line in order.lines
        ),
        delivered=delivered,
        shipment=shipment,
    )


# ------------------------------------------------------------------ the storefront chat

# What a signed-in shopper asks ({order}: one of their order names, {item}: a title from
# it): where an order is, which the offline rules answer from its shipment, read-only.
WHERE_IS = (
    "Hi there, I ordered the {item} about a week ago ({order}) and the tracking has not "
    "moved since Monday. Could you tell me where it is? I need it before the weekend.",
    "Hello! Where is my order {order}? The {item} is a present and I would love to know "
    "when it will get here.",
    "Good morning, could you check the delivery of {order} for me? I am still waiting for "
    "the {item} and the estimate in my email has passed.",
)
# RQ's name for the drafting job of a message (app/execution/queueing.py).
DRAFT_JOB = "draft-{message_id}"


@dataclass(frozen=True)
class ChatShop:
    domain: str
    # What each shopper says: (their Shopify customer number, the message).
    messages: list[tuple[str, str]]


def chat_shop(factory: sessionmaker[Session], shoppers: int) -> ChatShop:
    """A shop with ``shoppers`` customers Shopify knows, each with one to three orders on
    their way in our copy, and what each asks about one of them."""
    picker = random.Random(20_260_302)
    today = datetime.now(UTC)
    numbers = iter(range(5001, 5001 + 3 * shoppers))
    messages = []
    with factory() as session:
        shop = Shop(domain=f"chat-{uuid.uuid4().hex[:6]}.myshopify.com", name=SHOP_NAME)
        session.add(shop)
        session.flush()
        session.add(StaffMember(shop_id=shop.id, user_id="bench.owner", role=StaffRole.OWNER))
        for shopper in range(shoppers):
            number = str(7_000_000 + shopper)
            customer = Customer(
                shop_id=shop.id,
                email=f"shopper{shopper}@example.com",
                shopify_customer_id=f"gid://shopify/Customer/{number}",
            )
            session.add(customer)
            session.flush()
            orders = []
            for _ in range(picker.randint(1, 3)):
                placed = today - timedelta(days=picker.randint(2, DELIVERY_DAYS - 1))
                order = _order(picker, f"#{next(numbers)}", placed)
                order.shop_id, order.customer_id = shop.id, customer.id
                order.shopify_order_id = f"gid://shopify/Order/{order.name.lstrip('#')}"
                order.fulfilled_at = placed + timedelta(days=1)
                order.shipments = [_shipment(picker, order.fulfilled_at, today)]
                orders.append(order)
            session.add_all(orders)
            about = picker.choice(orders)
            words = picker.choice(WHERE_IS)
            messages.append(
                (number, words.format(order=about.name, item=picker.choice(about.lines)["title"]))
            )
        session.commit()
        return ChatShop(shop.domain, messages)


def _shipment(picker: random.Random, shipped: datetime, today: datetime) -> dict[str, Any]:
    """A shipment in transit, as our copy keeps Shopify's fulfilments."""
    return {
        "status": "in_transit",
        "carrier": picker.choice(CARRIERS),
        "tracking_number": f"{picker.randrange(10**12):012d}",
        "tracking_url": None,
        "estimated_delivery": (today + timedelta(days=picker.randint(1, 4))).isoformat(),
        "delivered_at": None,
        "shipped_at": shipped.isoformat(),
    }


class Storefront:
    """The storefront chat's requests as Shopify's app proxy forwards them to the app: its
    query (shop, signed-in customer, path prefix, time) signed with the app's secret, sent
    through the standard library's client with nothing on top, as
    ``bench_money_path.KeptAlive`` sends approvals, but each on a connection of its own:
    gunicorn closes one idle for 2 s, and a drafting with the model takes about that."""

    def __init__(self, base_url: str, domain: str) -> None:
        parts = urlsplit(base_url)
        self._host, self._port = parts.hostname or "", parts.port
        self._domain = domain

    def send(self, customer: str, text: str) -> uuid.UUID:
        """A new chat of ``customer`` with ``text``; the message's id, as the chat's state
        lists it."""
        query = signed_proxy_query(
            {
                "shop": self._domain,
                "logged_in_customer_id": customer,
                "path_prefix": "/apps/caseward",
                "timestamp": str(int(time.time())),
            },
            APP_SECRET,
        )
        with closing(http.client.HTTPConnection(self._host, self._port, timeout=30)) as connection:
            connection.request(
                "POST",
                f"/proxy/chat/messages?{query}",
                json.dumps({"conversation": None, "text": text}),
                {"Content-Type": "application/json"},
            )
            response = connection.getresponse()
            answer = json.loads(response.read())
        if response.status != 201:
            raise RuntimeError(f"the chat answered {response.status}: {answer}")
        [message] = [m for m in answer["messages"] if m["from"] == "customer"]
        return uuid.UUID(message["id"])


@dataclass(frozen=True)
class DrafterWorkers:
    """A drafter as the worker processes run it: its name and their environment."""

    name: str
    env: dict[str, str]


@dataclass(frozen=True)
class ChatRig:
    """What the chat runs share: the web app, its settings, the database and Redis."""

    web: str  # the web app's base URL
    settings: Settings
    session_factory: sessionmaker[Session]
    # May block on a job's result for up to RESULT_WAIT seconds (the app's own client
    # gives up on a read after 5 s).
    redis: RedisClient

    def workers(
        self, count: int, drafter: DrafterWorkers
    ) -> AbstractContextManager[list[subprocess.Popen[bytes]]]:
        """``count`` worker processes drafting with ``drafter``, on the money queue then
        the background queue, as in production."""
        queues = (self.settings.queue_name, self.settings.background_queue_name)
        return workers(count, drafter.env, *queues)


def drafters(
    settings: Settings, sandbox: Sandbox, api_key: str
) -> tuple[DrafterWorkers, DrafterWorkers]:
    """The offline rules (no Anthropic key, whatever this environment holds) and Claude
    against the sandbox."""
    base = {
        name: value
        for name, value in worker_env(settings).items()
        if name not in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")
    }
    return DrafterWorkers("offline", base), DrafterWorkers(
        f"claude ({MODEL_SECONDS:g} s)",
        {**base, "ANTHROPIC_API_KEY": api_key, "ANTHROPIC_BASE_URL": sandbox.url},
    )


@dataclass(frozen=True)
class ChatSample:
    """One message's way to its reply kept, in seconds from the POST."""

    answered: float  # the web's 201: the message kept owed a draft, committed, job queued
    started: float  # a worker starting the job (RQ's started_at)
    model: float  # the model's answer as the sandbox served it, within the job
    kept: float  # the job's end, once the reply has committed (RQ's ended_at)


def chat_latency(
    rig: ChatRig, shop: ChatShop, drafter: DrafterWorkers, sandbox: Sandbox
) -> list[ChatSample]:
    """Each message sent and drafted alone, one worker listening; the first
    ``WARM_UP`` are left out (the web's processes and the worker prepare their queries on
    the first requests and jobs they serve)."""
    timings, jobs = [], []
    storefront = Storefront(rig.web, shop.domain)
    with rig.workers(1, drafter):
        for customer, text in shop.messages:
            sent, clock = time.time(), time.perf_counter()
            message_id = storefront.send(customer, text)
            answered = time.perf_counter() - clock
            job = drafted(rig.redis, DRAFT_JOB.format(message_id=message_id))
            assert job.started_at is not None and job.ended_at is not None
            jobs.append(job)
            timings.append((sent, answered, _unix(job.started_at), _unix(job.ended_at)))
    check_answered(rig, jobs)
    asked = [
        (request["arrived_at"], request["answered_at"])
        for request in sandbox.received()
        if request["path"] == "/v1/messages" and request["answered_at"]
    ]
    return [
        ChatSample(
            answered=answered,
            started=started - sent,
            model=sum(end - start for start, end in asked if started <= start <= ended),
            kept=ended - sent,
        )
        for sent, answered, started, ended in timings[WARM_UP:]
    ]


@dataclass(frozen=True)
class Rate:
    """Drafts a second of ``workers`` warm worker processes draining a full queue."""

    workers: int
    together: float  # the drafts over the first one's start to the last one's end
    per_worker: list[float]  # each worker's drafts over its first start to its last end


def drafts_per_second(
    rig: ChatRig, shop: ChatShop, drafter: DrafterWorkers, worker_count: int
) -> Rate:
    """The shop's messages sent with no worker listening and their jobs taken off the
    queue (RQ's ``remove``); ``worker_count`` workers started; once all of them listen, one
    job each, untimed (a process's first job pays for what it loads on first use: lazy
    imports, its first queries), then, once all listen again, the others put back at once
    (``push_job_id``) and timed."""
    storefront = Storefront(rig.web, shop.domain)
    message_ids = [storefront.send(customer, text) for customer, text in shop.messages]
    queue = Queue(rig.settings.background_queue_name, connection=rig.redis)
    held = [DRAFT_JOB.format(message_id=message_id) for message_id in message_ids]
    if sorted(queue.get_job_ids()) != sorted(held):
        raise RuntimeError(f"{len(held)} messages sent, {queue.count} jobs queued")
    for job_id in held:
        queue.remove(job_id)
    jobs = []
    with rig.workers(worker_count, drafter):
        for batch in (held[:worker_count], held[worker_count:]):
            listening(queue, worker_count)
            with rig.redis.pipeline() as pipeline:
                for job_id in batch:
                    queue.push_job_id(job_id, pipeline=pipeline)
                pipeline.execute()
            jobs.append([drafted(rig.redis, job_id) for job_id in batch])
    warmed, timed = jobs
    check_answered(rig, warmed + timed)
    # Each listening worker takes one job of the batch: the others are pushed within
    # microseconds, while it drafts.
    if len({job.worker_name for job in warmed}) != worker_count:
        raise RuntimeError("a worker drafted two of the first jobs, another none")
    spans: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for job in timed:
        assert job.worker_name and job.started_at is not None and job.ended_at is not None
        spans[job.worker_name].append((_unix(job.started_at), _unix(job.ended_at)))
    per_worker = {
        name: (min(start for start, _ in ran), max(end for _, end in ran))
        for name, ran in spans.items()
    }
    first = min(start for start, _ in per_worker.values())
    last = max(end for _, end in per_worker.values())
    return Rate(
        worker_count,
        len(timed) / (last - first),
        [len(spans[name]) / (end - start) for name, (start, end) in per_worker.items()],
    )


def listening(queue: Queue, count: int) -> None:
    """Return once ``count`` workers wait for a job on ``queue`` (RQ marks a worker idle
    as it starts its blocking read of the queues); a worker registers before it starts its
    scheduler and first listens. Looks twenty times a second, for 30 s at most: nothing
    is timed yet."""
    deadline = time.monotonic() + 30
    while [worker.get_state() for worker in Worker.all(queue=queue)] != ["idle"] * count:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{count} workers did not listen")
        time.sleep(0.05)


def drafted(redis: RedisClient, job_id: str) -> Job:
    """The drafting job ``job_id`` once it has ended (waited for on Redis, at most
    ``RESULT_WAIT`` seconds); raises if it failed."""
    job = ended(Job.fetch(job_id, connection=redis))
    if job.get_status() != JobStatus.FINISHED:
        result = job.latest_result()
        raise RuntimeError(
            f"job {job.id} ended {job.get_status()}: {result.exc_string if result else ''}"
        )
    return job


def check_answered(rig: ChatRig, jobs: list[Job]) -> None:
    """Every job drafted an answer, and every message's conversation holds a reply by
    Caseward, kept in the database."""
    outcomes = {str(job.return_value()) for job in jobs}
    if outcomes != {f"drafted: {NextStep.ANSWER.value}"}:
        raise RuntimeError(f"the drafting jobs ended {sorted(outcomes)}")
    message_ids = [uuid.UUID(job.args[0]) for job in jobs]
    with rig.session_factory() as session:
        asked = select(Message.conversation_id).where(Message.id.in_(message_ids))
        kept = session.scalar(
            select(func.count(distinct(Message.conversation_id))).where(
                Message.conversation_id.in_(asked), Message.author == Author.CASEWARD
            )
        )
    if kept != len(message_ids):
        raise RuntimeError(f"{len(message_ids)} messages drafted, {kept} replies kept")


# ------------------------------------------------------------------ tokens per case


@dataclass(frozen=True)
class Call:
    usage: Usage
    seconds: float


def as_shipped(api_key: str, url: str) -> Callable[[CaseBrief], Usage]:
    """The shipped drafter: instructions and policy cached."""
    drafter = ClaudeDrafter(
        api_key=api_key,
        base_url=url,
        model=MODEL,
        timeout_seconds=TIMEOUT_SECONDS,
        max_retries=0,
    )

    def draft(brief: CaseBrief) -> Usage:
        run = drafter.run(brief)
        if run.failure is not None or run.usage is None:
            raise RuntimeError(f"the drafter did not draft: {run.failure}")
        return run.usage

    return draft


def uncached(api_key: str, url: str) -> Callable[[CaseBrief], Usage]:
    """The shipped drafter's request and parsing, with no block marked for the cache."""

    def draft(brief: CaseBrief) -> Usage:
        answer = ask_with_tool(
            api_key=api_key,
            base_url=url,
            model=MODEL,
            system=[SystemBlock(INSTRUCTIONS), SystemBlock(policy_text(brief))],
            messages=[{"role": "user", "content": case_message(brief)}],
            tool=ToolSpec(TOOL_NAME, TOOL_DESCRIPTION, DRAFT_SCHEMA),
            max_tokens=MAX_TOKENS,
            timeout_s=TIMEOUT_SECONDS,
            max_retries=0,
        )
        if parse_draft(answer.tool_input).step != NextStep.ANSWER:
            raise RuntimeError("the sandbox answered another draft than the one scripted")
        return answer.usage

    return draft


def timed(
    draft: Callable[[CaseBrief], Usage],
    briefs: list[CaseBrief],
    before_each: Callable[[], object] = lambda: None,
) -> list[Call]:
    """Each brief drafted in turn; ``before_each`` runs untimed before every draft."""
    calls = []
    for brief in briefs:
        before_each()
        started = time.perf_counter()
        usage = draft(brief)
        calls.append(Call(usage, time.perf_counter() - started))
    return calls


def row(mode: str, calls: list[Call]) -> str:
    def mean(tokens: Callable[[Usage], float]) -> float:
        return statistics.fmean(tokens(call.usage) for call in calls)

    seconds = [call.seconds for call in calls]
    return (
        f"{mode:>25} | {mean(lambda u: u.input_tokens):7.1f} | "
        f"{mean(lambda u: u.cache_creation_input_tokens):7.1f} | "
        f"{mean(lambda u: u.cache_read_input_tokens):7.1f} | "
        f"{mean(lambda u: u.output_tokens):6.1f} | {mean(billed_input):8.1f} | "
        f"p50 {statistics.median(seconds) * 1000:5.1f} p95 {percentile(seconds, 0.95) * 1000:5.1f}"
    )


def token_figures(sandbox: Sandbox, api_key: str, drafts: int) -> dict[str, Any]:
    """Print tokens and time per drafted case with and without prompt caching."""
    briefs = case_briefs(drafts)
    answering(sandbox, after_seconds=0)
    shipped, plain = as_shipped(api_key, sandbox.url), uncached(api_key, sandbox.url)
    plain(briefs[0])  # opens the SDK's connection; nothing is cached without breakpoints
    runs = {
        "as shipped (cached)": timed(shipped, briefs),
        "as shipped, cache expired": timed(
            shipped,
            briefs,
            lambda: sandbox.control("POST", "/clock/advance", {"seconds": QUIET_SECONDS}),
        ),
        "caching off": timed(plain, briefs),
    }
    print(
        f"drafting {drafts} cases of one shop (1-3 orders each) with the Claude drafter, "
        "Anthropic sandbox as a process; tokens per drafted case (mean), the sandbox's "
        "estimate of 4 characters a token"
    )
    print(
        f"{'mode':>25} | {'input':>7} | {'c.write':>7} | {'c.read':>7} | {'output':>6} | "
        f"{'billed':>8} | wall time per call (ms)"
    )
    for mode, calls in runs.items():
        print(row(mode, calls))
    print(
        "billed: input-side tokens at the base input price, "
        f"input + {CACHE_WRITE_MULTIPLIER} x cache write + {CACHE_READ_MULTIPLIER} x cache read"
    )

    def billed(mode: str) -> float:
        return statistics.fmean(billed_input(call.usage) for call in runs[mode])

    off = billed("caching off")
    print(
        f"saving from caching: {1 - billed('as shipped (cached)') / off:.1%} of the input side "
        "with drafts back to back; when every draft finds the cache expired, "
        f"{billed('as shipped, cache expired') / off - 1:+.1%} (each pays the cache write)"
    )
    return {
        "drafts": drafts,
        "modes": [
            {
                "mode": mode,
                "input": round(statistics.fmean(c.usage.input_tokens for c in calls), 1),
                "cache_write": round(
                    statistics.fmean(c.usage.cache_creation_input_tokens for c in calls), 1
                ),
                "cache_read": round(
                    statistics.fmean(c.usage.cache_read_input_tokens for c in calls), 1
                ),
                "output": round(statistics.fmean(c.usage.output_tokens for c in calls), 1),
                "billed": round(billed(mode), 1),
            }
            for mode, calls in runs.items()
        ],
    }


# ------------------------------------------------------------------ the figures


def chat_figures(
    settings: Settings, sandbox: Sandbox, api_key: str, *, chats: int, burst: int
) -> dict[str, Any]:
    """Print a chat message's way to its reply kept, and drafts a second, per drafter."""
    factory = make_session_factory(make_engine(settings.database_url))
    latency_shop = chat_shop(factory, chats + WARM_UP)
    burst_shop = chat_shop(factory, (burst + 1) * max(WORKER_COUNTS))
    answering(sandbox, after_seconds=MODEL_SECONDS)
    web_env = {**worker_env(settings), "SHOPIFY_API_KEY": APP_KEY, "SHOPIFY_API_SECRET": APP_SECRET}
    redis = RedisClient.from_url(settings.redis_url, socket_timeout=RESULT_WAIT + 5)
    latencies: dict[str, list[ChatSample]] = {}
    rates: dict[str, list[Rate]] = {}
    with web_process(web_env) as web:
        rig = ChatRig(web, settings, factory, redis)
        for drafter in drafters(settings, sandbox, api_key):
            latencies[drafter.name] = chat_latency(rig, latency_shop, drafter, sandbox)
            rates[drafter.name] = [
                drafts_per_second(
                    rig,
                    ChatShop(burst_shop.domain, burst_shop.messages[: (burst + 1) * count]),
                    drafter,
                    count,
                )
                for count in WORKER_COUNTS
            ]
    ms = 1000
    print(
        f"a storefront chat message to its reply kept: {chats} messages, one at a time, each "
        "a signed-in shopper asking where an order is, POSTed as Shopify's app proxy forwards "
        "it (gunicorn), drafted by one worker process (background queue); ms"
    )
    print(
        f"{'drafter':>14} | {'message to reply kept':>21} | {'POST answered':>13} | "
        f"{'job started':>11} | {'model':>7} | {'kept less model':>15}"
    )
    for name, samples in latencies.items():
        kept = [sample.kept for sample in samples]
        own = [sample.kept - sample.model for sample in samples]

        def p50(stage: Callable[[ChatSample], float], of: list[ChatSample] = samples) -> float:
            return statistics.median(stage(sample) for sample in of) * ms

        print(
            f"{name:>14} | p50 {statistics.median(kept) * ms:6.1f} p95 "
            f"{percentile(kept, 0.95) * ms:6.1f} | p50 {p50(lambda s: s.answered):9.1f} | "
            f"p50 {p50(lambda s: s.started):7.1f} | {p50(lambda s: s.model):7.1f} | "
            f"p50 {statistics.median(own) * ms:6.1f} p95 {percentile(own, 0.95) * ms:6.1f}"
        )
    print(
        f"drafts per second: {burst} messages a worker, put on the queue at once when every "
        "worker listens, warm (one untimed draft each); a worker timed from its first job's "
        "start to its last job's end, the workers together from the first start to the last end"
    )
    print(f"{'drafter':>14} | {'workers':>7} | {'together':>8} | per worker (each)")
    for name, runs in rates.items():
        for rate in runs:
            each = ", ".join(f"{value:.2f}" for value in sorted(rate.per_worker))
            print(
                f"{name:>14} | {rate.workers:>7} | {rate.together:8.2f} | "
                f"{statistics.fmean(rate.per_worker):.2f} ({each})"
            )
    return {
        "message_to_reply_kept_ms": [
            {
                "drafter": name,
                "p50": round(statistics.median(s.kept for s in samples) * ms, 1),
                "p95": round(percentile([s.kept for s in samples], 0.95) * ms, 1),
                "model_p50": round(statistics.median(s.model for s in samples) * ms, 1),
            }
            for name, samples in latencies.items()
        ],
        "drafts_per_second": [
            {"drafter": name, "workers": rate.workers, "together": round(rate.together, 2)}
            for name, runs in rates.items()
            for rate in runs
        ],
    }


def drafting_figures(settings: Settings, *, chats: int, burst: int, drafts: int) -> None:
    """The chat's figures, then the tokens per drafted case."""
    with anthropic_sandbox() as (sandbox, api_key):
        chat = chat_figures(settings, sandbox, api_key, chats=chats, burst=burst)
        print()
        tokens = token_figures(sandbox, api_key, drafts)
    record("drafting", chat | {"tokens_per_drafted_case": tokens})
