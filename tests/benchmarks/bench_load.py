"""Benchmark: load over every surface at once, with faults, and the invariants after it.

    .venv/bin/python tests/benchmarks/bench_load.py [--minutes 10] [--workers 3]
        [--faults | --no-faults]

The sequence:

1. a database of its own (``bench_money_path.database``, on ``DATABASE_URL``) and a
   redis-server process of its own on port 13201 (append-only file), so that it can be
   restarted; the Stripe, Shopify, Gorgias and Anthropic sandboxes as processes;
2. three shops seeded: a Stripe shop (payments at the Stripe sandbox, a waiting $48 refund
   proposal for each, the webhook secret, a Gorgias connection with tickets at the Gorgias
   sandbox, an agent credential), a Shopify shop installed by token exchange (paid orders
   at the Shopify sandbox, a waiting refund proposal of one apron each), and a storefront
   shop of signed-in shoppers with orders on their way;
3. the stack as production runs it: gunicorn with Caseward's config, ``--workers`` RQ
   workers (money queue, then background queue) under a supervisor, and the sweeper, with
   Caseward's default timeouts; the drafter is Claude against the Anthropic sandbox
   (answering after 0.5 s);
4. ``--minutes`` of load from the users of ``load_surfaces.py`` (locust's library API, in
   this process): Stripe, Shopify and Gorgias deliveries, storefront chat messages,
   approvals and MCP tool calls, at the rates of :data:`RATES`; with ``--faults``, the
   schedule of ``load_faults.py`` at the same time;
5. the deliveries still unacknowledged sent again until acknowledged, as providers retry;
   then the queues drained and every action settled or waiting for its look-up (up to
   :data:`DRAIN_SECONDS`);
6. the invariants, read from the database, Redis and the providers' sandboxes
   (:func:`invariants`); the figures printed and kept (``figures.record``, ``load`` or
   ``load_faults``). It exits 1 if an invariant broke.
"""

# ruff: noqa: E402  (locust's gevent must patch the standard library before other imports)

from __future__ import annotations

from gevent import monkey

# locust runs its users on gevent: sockets, ssl and threads are patched before anything
# imports them (urllib3 builds an SSL context as it is imported).
monkey.patch_all()

import argparse
import collections
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import gevent
import requests
import stripe
from bench_drafting import answering, anthropic_sandbox, chat_shop
from bench_money_path import (
    OWNER,
    REPO,
    Sandbox,
    approver_token,
    build,
    database,
    payments,
    posted_twice,
    proposals,
    sandbox_process,
    web_process,
    worker_env,
)
from bench_shopify import (
    API_KEY,
    API_SECRET,
    ShopifyBench,
    install,
    refund_proposals,
    refundable_orders,
)
from figures import record
from load_faults import (
    Happened,
    OwnRedis,
    ProviderFaults,
    Supervisor,
    own_redis,
    run_schedule,
    schedule,
)
from load_surfaces import Plan, SurfaceUser, send_what_is_owed, users
from locust.env import Environment
from redis import Redis
from rq import Queue, Worker
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from app.actors import Surface, staff
from app.agents.service import issue_agent_credential
from app.cases.models import Case
from app.clock import utcnow
from app.connections.models import Connection
from app.conversations.models import Author, Conversation, Message
from app.crypto import secret_box
from app.drafting.models import CaseDraftRecord
from app.execution.models import Action, ActionAttempt, ActionStatus, ProviderEvent, ShopBrakes
from app.helpdesk.connection import save_gorgias_connection
from app.migrations import upgrade
from app.settings import Settings
from app.shops.models import Shop
from integrations.shopify._adapter_facts import action_id_in, read_order
from integrations.shopify.graphql import AdminClient

REDIS_PORT = 13201
WEBHOOK_SECRET = "whsec_load_benchmark_0123456789abcdef"
GORGIAS_KEY = "gorgias-load-api-key-0123456789"
# Requests a second per surface, and the users sharing them: enough users that one
# waiting on a slow answer leaves the others sending.
RATES = {
    "stripe webhook": 8.0,
    "shopify webhook": 4.0,
    # Gorgias allows 40 API requests per 20 s per account; each call's job reads its ticket.
    "gorgias call": 0.5,
    "widget message": 1.0,
    "approval": 0.75,
    "mcp call": 2.0,
}
USERS = {
    "stripe webhook": 8,
    "shopify webhook": 4,
    "gorgias call": 1,
    "widget message": 2,
    "approval": 3,
    "mcp call": 2,
}
# Of the approvals: one in three a Shopify refund, the others Stripe refunds.
SHOPIFY_SHARE = 1 / 3
MODEL_SECONDS = 0.5
TICKETS = 20
SHOPPERS = 50
# How long the queues may take to drain, and the deliveries owed to be acknowledged.
DRAIN_SECONDS = 300.0
SETTLED = 5.0
# Seconds after a fault ends during which an answer refused is still counted as its doing.
AFTERMATH = 10.0
OWED_SECONDS = 120.0
PROVIDER_REPORTED = {
    ActionStatus.PENDING,
    ActionStatus.REQUIRES_ACTION,
    ActionStatus.SUCCEEDED,
    ActionStatus.FAILED,
    ActionStatus.CANCELED,
    ActionStatus.REJECTED,
}
# Not sent, as Caseward recorded it: a refund found at the provider breaks the invariant.
NOT_SENT = {ActionStatus.HALTED, ActionStatus.EXPIRED, ActionStatus.CANNOT_RUN}


# ------------------------------------------------------------------ the stack


@dataclass
class Stack:
    settings: Settings
    env: dict[str, str]
    web: str
    redis: OwnRedis
    supervisor: Supervisor
    stripe: Sandbox
    shopify: Sandbox
    gorgias: Sandbox
    anthropic: Sandbox
    plan: Plan
    shops: dict[str, uuid.UUID]  # stripe, shopify, chat
    session_factory: sessionmaker[Session]
    stripe_client: stripe.StripeClient
    shopify_bench: ShopifyBench
    web_log: Path


@contextmanager
def stack(workers: int, minutes: float) -> Iterator[Stack]:
    with ExitStack() as stack_of:
        instance = Path(stack_of.enter_context(tempfile.TemporaryDirectory()))
        db_url = stack_of.enter_context(database())
        redis = stack_of.enter_context(own_redis(REDIS_PORT))
        upgrade(db_url)
        stripe = stack_of.enter_context(sandbox_process("stripe"))
        shopify = stack_of.enter_context(
            sandbox_process("shopify", "--api-key", API_KEY, "--api-secret", API_SECRET)
        )
        gorgias = stack_of.enter_context(sandbox_process("gorgias"))
        anthropic, anthropic_key = stack_of.enter_context(anthropic_sandbox())
        answering(anthropic, after_seconds=MODEL_SECONDS)
        base = Settings(
            instance_path=instance,
            database_url=db_url,
            redis_url=redis.url,
            secret_key="load",
            queue_name=f"caseward-load-{uuid.uuid4().hex[:6]}",
            background_queue_name=f"caseward-load-{uuid.uuid4().hex[:6]}-background",
            stripe_api_base=stripe.url,
        ).completed()
        started = time.monotonic()
        bench = build(base, stripe, WEBHOOK_SECRET)
        settings = replace(
            bench.settings,
            shopify_api_key=API_KEY,
            shopify_api_secret=API_SECRET,
            shopify_api_base=shopify.url,
            gorgias_api_base=gorgias.url,
        )
        shopify_bench = install(settings, shopify)
        approvals = round(minutes * 60 * RATES["approval"] * 1.1) + 10
        shopify_count = round(approvals * SHOPIFY_SHARE)
        waiting = [("stripe", *p) for p in proposals(bench, payments(bench, approvals))]
        orders = refundable_orders(shopify_bench, shopify_count)
        waiting += [("shopify", *p) for p in refund_proposals(shopify_bench, orders)]
        # Stripe and Shopify approvals interleaved, as their people work side by side.
        waiting.sort(key=lambda item: uuid.uuid5(uuid.NAMESPACE_OID, str(item[1])))
        factory = bench.session_factory
        chat = chat_shop(factory, SHOPPERS)
        gorgias_connection, gorgias_secret, tickets = _connect_gorgias(
            settings, factory, bench.shop.id, gorgias
        )
        with factory() as session:
            shop = session.get(Shop, bench.shop.id)
            assert shop is not None
            agent = issue_agent_credential(
                session,
                shop=shop,
                actor=staff(OWNER, Surface.STAFF_API),
                name="load",
                allowed_kinds=["refund"],
                ceiling=None,
                now=utcnow(),
            )
            chat_id = session.scalar(select(Shop.id).where(Shop.domain == chat.domain))
            cases = [
                str(c) for c in session.scalars(select(Case.id).where(Case.shop_id == shop.id))
            ]
            stripe_connection = session.scalar(
                select(Connection.id).where(
                    Connection.shop_id == shop.id, Connection.provider == "stripe"
                )
            )
            session.commit()
        assert chat_id is not None
        print(
            f"seeded in {time.monotonic() - started:.0f} s: {len(waiting)} waiting proposals "
            f"({shopify_count} Shopify), {SHOPPERS} shoppers, {TICKETS} Gorgias tickets",
            flush=True,
        )
        plan = Plan(
            stripe_connection=str(stripe_connection),
            stripe_secret=WEBHOOK_SECRET,
            shopify_domain=shopify_bench.domain,
            shopify_secret=API_SECRET,
            shopify_customer_gid=shopify_bench.customer_gid,
            shopify_orders=[order.gid for order in orders],
            gorgias_connection=str(gorgias_connection),
            gorgias_secret=gorgias_secret,
            gorgias_tickets=tickets,
            gorgias_control=gorgias.control,
            chat=chat,
            app_proxy_secret=API_SECRET,
            approver_tokens={
                "stripe": approver_token(factory, bench.shop.id),
                "shopify": approver_token(factory, shopify_bench.shop_id),
            },
            proposals=collections.deque(waiting),
            agent_secret=agent.secret,
            cases=cases,
        )
        env = worker_env(
            settings,
            STRIPE_API_BASE=stripe.url,
            SHOPIFY_API_KEY=API_KEY,
            SHOPIFY_API_SECRET=API_SECRET,
            SHOPIFY_API_BASE=shopify.url,
            GORGIAS_API_BASE=gorgias.url,
            ANTHROPIC_API_KEY=anthropic_key,
            ANTHROPIC_BASE_URL=anthropic.url,
            # One agent credential stands for many agents here.
            CASEWARD_AGENT_RATE_LIMIT="100000/minute",
        )
        web_log = instance / "web.log"
        web = stack_of.enter_context(web_process(env, log=web_log))
        supervisor = Supervisor(env, (settings.queue_name, settings.background_queue_name))
        stack_of.callback(supervisor.stop)
        supervisor.start(workers)
        gevent.spawn(supervisor.keep_running, gevent.sleep)
        sweeper = subprocess.Popen(
            [sys.executable, "-m", "app.background", "sweeper"],
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        stack_of.callback(_stop, sweeper)
        _listening(redis, settings.queue_name, workers)
        yield Stack(
            settings,
            env,
            web,
            redis,
            supervisor,
            stripe,
            shopify,
            gorgias,
            anthropic,
            plan,
            {"stripe": bench.shop.id, "shopify": shopify_bench.shop_id, "chat": chat_id},
            factory,
            bench.secret_client,
            shopify_bench,
            web_log,
        )


def errors_logged(log: Path) -> collections.Counter[str]:
    """The exceptions in the web's log, counted by the last line of each record's
    traceback (the exception a chain ended in). A record begins with ``[`` (the app's and
    gunicorn's) or an address (the access log)."""
    found: collections.Counter[str] = collections.Counter()
    records = re.split(r"\n(?=\[|\d+\.\d+\.\d+\.\d+ )", log.read_text(errors="replace"))
    for logged in records:
        if "Traceback (most recent call last):" in logged:
            last = [line for line in logged.splitlines() if line and not line[0].isspace()][-1]
            found[last[:200]] += 1
    return found


def _connect_gorgias(
    settings: Settings, factory: Any, shop_id: uuid.UUID, gorgias: Sandbox
) -> tuple[uuid.UUID, str, list[int]]:
    """A Gorgias account at the sandbox with tickets from the shop's customer, and the
    shop's connection to it; returns the connection, its secret and the ticket ids."""
    account = gorgias.control(
        "POST",
        "/accounts",
        {"name": "loadbench", "api_users": [{"email": "api@load.example", "api_key": GORGIAS_KEY}]},
    )
    domain = account["domain"]
    tickets = [
        int(
            gorgias.control(
                "POST",
                f"/accounts/{domain}/tickets",
                {
                    "customer_email": "buyer@example.com",
                    "subject": f"Order question {number}",
                    "body_text": "Hello, where is my order?",
                },
            )["id"]
        )
        for number in range(TICKETS)
    ]
    with factory() as session:
        shop = session.get(Shop, shop_id)
        connected = save_gorgias_connection(
            session,
            shop=shop,
            actor=staff(OWNER, Surface.STAFF_API),
            domain=domain,
            username="api@load.example",
            api_key=GORGIAS_KEY,
            box=secret_box(settings),
            check=lambda _: None,
            now=utcnow(),
        )
        session.commit()
        assert connected.new_secret is not None
        return connected.connection.id, connected.new_secret, tickets


def _listening(redis: OwnRedis, queue_name: str, count: int) -> None:
    queue = Queue(queue_name, connection=Redis.from_url(redis.url))
    deadline = time.monotonic() + 60
    while Worker.count(queue=queue) < count:
        if time.monotonic() > deadline:
            raise RuntimeError("the workers did not start")
        time.sleep(0.2)


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    process.wait(timeout=30)


# ------------------------------------------------------------------ the load


@dataclass
class Ran:
    environment: Environment
    seconds: float
    happened: list[Happened]
    owed_left: int


def resume_brakes(st: Stack) -> str:
    """The shops' owners resume sending once a provider answers again (409: no brake
    held)."""
    answers = []
    for provider in ("stripe", "shopify"):
        response = requests.post(
            f"{st.web}/api/shop/brakes/resume",
            headers={"Authorization": f"Bearer {st.plan.approver_tokens[provider]}"},
            json={},
            timeout=30,
        )
        answers.append(
            f"{provider} resumed" if response.status_code == 200 else f"{provider} not braked"
        )
        if response.status_code not in (200, 409):
            answers[-1] = f"{provider} resume answered {response.status_code}"
    return ", ".join(answers)


def load(st: Stack, seconds: float, with_faults: bool) -> Ran:
    """The users for ``seconds`` (and the fault schedule beside them), then the deliveries
    still owed sent until acknowledged."""
    classes = users(st.plan, st.web, RATES, USERS)
    environment = Environment(user_classes=list(classes))
    runner = environment.create_local_runner()
    total = sum(USERS.values())
    started = st.plan.started = time.monotonic()
    runner.start(total, spawn_rate=total)
    faults = None
    if with_faults:
        providers = ProviderFaults(
            st.stripe,
            st.shopify,
            st.anthropic,
            timeout_ms=int(st.settings.provider_timeout_seconds * 1000) + 5000,
            restore_model=lambda: answering(st.anthropic, after_seconds=MODEL_SECONDS),
        )
        planned = schedule(
            seconds,
            st.redis,
            st.supervisor,
            st.settings.database_url,
            providers,
            resume=lambda: resume_brakes(st),
        )
        faults = gevent.spawn(run_schedule, planned, seconds, started, gevent.sleep)
    gevent.sleep(seconds)
    # No new deliveries; the requests under way get their answers (or time out) and a
    # failed one joins those owed, before the users stop.
    st.plan.stopping = True
    grace = time.monotonic() + SurfaceUser.network_timeout + 5
    while st.plan.in_flight and time.monotonic() < grace:
        gevent.sleep(0.2)
    runner.stop()
    happened = faults.get() if faults is not None else []
    ran_for = time.monotonic() - started
    # A user of its own, its surface's tally passed with each delivery.
    sender: SurfaceUser = classes[0](environment)
    left = send_what_is_owed(st.plan, sender, time.monotonic() + OWED_SECONDS)
    if with_faults:
        print(f"  after the load: {resume_brakes(st)}", flush=True)
    runner.quit()
    return Ran(environment, ran_for, happened, left)


def drain(st: Stack) -> float:
    """Wait until no job is queued, no action is queued (outside a held brake),
    submitting or unknown, and no draft is owed, on two looks :data:`SETTLED` seconds
    apart (a job taken off its queue is running meanwhile); returns the seconds waited, at
    most :data:`DRAIN_SECONDS`. RQ's registry of started jobs is not read: a killed
    worker's jobs stay listed there until RQ's cleanup, which is what the database's own
    account (the sweeper) is for."""
    redis = Redis.from_url(st.redis.url)
    names = (st.settings.queue_name, st.settings.background_queue_name)
    queues = [Queue(name, connection=redis) for name in names]
    started = time.monotonic()
    settled_since: float | None = None
    while time.monotonic() - started < DRAIN_SECONDS:
        if _busy(st, queues):
            settled_since = None
        elif settled_since is None:
            settled_since = time.monotonic()
        elif time.monotonic() - settled_since >= SETTLED:
            break
        time.sleep(1.0)
    return time.monotonic() - started


def _busy(st: Stack, queues: list[Queue]) -> bool:
    if any(queue.count for queue in queues):
        return True
    with st.session_factory() as session:
        unsettled = session.scalar(
            select(func.count())
            .select_from(Action)
            .outerjoin(ShopBrakes, ShopBrakes.shop_id == Action.shop_id)
            .where(
                Action.status.in_(
                    [ActionStatus.QUEUED, ActionStatus.SUBMITTING, ActionStatus.UNKNOWN]
                ),
                ~((Action.status == ActionStatus.QUEUED) & ShopBrakes.tripped_at.is_not(None)),
            )
        )
        owed = session.scalar(
            select(func.count()).select_from(Message).where(Message.draft_owed_since.is_not(None))
        )
    return bool(unsettled or owed)


# ------------------------------------------------------------------ the invariants


@dataclass(frozen=True)
class Check:
    name: str
    held: bool
    detail: str


def invariants(st: Stack) -> tuple[list[Check], dict[str, int], dict[str, int]]:
    """Every check after the drain, the actions by status, and their attempts at the
    provider by purpose and outcome (a send answered, unknown, not sent; a look-up found
    or absent; interrupted: cut off by a killed worker)."""
    plan = st.plan
    checks: list[Check] = []
    with st.session_factory() as session:
        for surface, provider, shop in (
            ("stripe webhook", "stripe", "stripe"),
            ("shopify webhook", "shopify", "shopify"),
            ("gorgias call", "gorgias", "stripe"),
        ):
            kept = collections.Counter(
                session.scalars(
                    select(ProviderEvent.event_id).where(
                        ProviderEvent.shop_id == st.shops[shop], ProviderEvent.provider == provider
                    )
                )
            )
            acknowledged, sent = plan.acknowledged[surface], plan.sent[surface]
            lost = acknowledged - set(kept)
            twice = [event for event, times in kept.items() if times > 1]
            checks.append(
                Check(
                    f"{surface}s: every one acknowledged in the end, kept once",
                    not lost and not twice and acknowledged == sent,
                    f"{len(sent)} sent, {len(acknowledged)} acknowledged, {len(lost)} "
                    f"acknowledged but not kept, {len(twice)} kept twice",
                )
            )
        checks.append(_gorgias_messages(session, st))
        checks.append(_posted_once(st))
        checks.append(_drafted_once(session, st))
        checks.append(_approved_once(session, st))
        statuses, action_checks = _actions(session, st)
        checks += action_checks
        attempts = collections.Counter(
            f"{purpose} {outcome}"
            for purpose, outcome in session.execute(
                select(ActionAttempt.purpose, ActionAttempt.outcome)
            )
        )
    return checks, statuses, dict(sorted(attempts.items()))


def _gorgias_messages(session: Session, st: Stack) -> Check:
    """Every acknowledged call's message is in its conversation once: its job ran."""
    acknowledged = {key.partition(":")[2] for key in st.plan.acknowledged["gorgias call"]}
    counted = collections.Counter(
        session.scalars(
            select(Message.channel_message_id).where(
                Message.shop_id == st.shops["stripe"],
                Message.channel_message_id.in_(acknowledged),
            )
        )
    )
    missing = [m for m in acknowledged if counted[m] == 0]
    twice = [m for m in acknowledged if counted[m] > 1]
    return Check(
        "gorgias calls: every message synced into its conversation once",
        not missing and not twice,
        f"{len(acknowledged)} messages, {len(missing)} missing, {len(twice)} twice",
    )


def _posted_once(st: Stack) -> Check:
    """None of our ids (Gorgias' ``external_id``) posted twice."""
    posted, twice = posted_twice(st.gorgias.received())
    return Check(
        "gorgias: none of our notes and replies posted to a ticket twice",
        not twice,
        f"{posted} posted, {len(twice)} posted twice",
    )


def _drafted_once(session: Session, st: Stack) -> Check:
    """Every storefront message kept was drafted once: its mark cleared and one drafting
    run recorded for its case (each message opens a conversation and a case of its own)."""
    shop_id = st.shops["chat"]
    messages = session.execute(
        select(Message.id, Conversation.case_id, Message.draft_owed_since)
        .join(Conversation, Conversation.id == Message.conversation_id)
        .where(Message.shop_id == shop_id, Message.author == Author.CUSTOMER)
    ).all()
    drafts = collections.Counter(
        session.scalars(
            select(CaseDraftRecord.case_id).where(
                CaseDraftRecord.shop_id == shop_id, CaseDraftRecord.agent_id.is_(None)
            )
        )
    )
    owed = [m for m, _, mark in messages if mark is not None]
    never = [m for m, case, _ in messages if drafts[case] == 0]
    twice = [m for m, case, _ in messages if drafts[case] > 1]
    kept = {str(m) for m, _, _ in messages}
    unkept = st.plan.acknowledged["widget message"] - kept
    return Check(
        "widget messages: every one kept drafted exactly once",
        not owed and not never and not twice and not unkept,
        f"{len(messages)} kept ({len(st.plan.acknowledged['widget message'])} answered 201), "
        f"{len(owed)} still owed, {len(never)} never drafted, {len(twice)} drafted twice or "
        f"more, {len(unkept)} answered 201 but not kept{_examples(owed, never, twice)}",
    )


def _examples(*found: list[uuid.UUID]) -> str:
    """The first few messages of each kind found, to look them up after a broken run."""
    named = [str(m) for kind in found for m in kind[:3]]
    return f" (e.g. {', '.join(named)})" if named else ""


def _approved_once(session: Session, st: Stack) -> Check:
    acknowledged = {uuid.UUID(p) for p in st.plan.acknowledged["approval"]}
    actions = collections.Counter(
        session.scalars(select(Action.proposal_id).where(Action.proposal_id.in_(acknowledged)))
    )
    none = [p for p in acknowledged if actions[p] == 0]
    twice = [p for p in acknowledged if actions[p] > 1]
    unanswered = len(st.plan.sent["approval"]) - len(acknowledged)
    return Check(
        "approvals: each answered one made exactly one action",
        not none and not twice and not unanswered,
        f"{len(st.plan.sent['approval'])} sent, {unanswered} never answered, {len(none)} "
        f"without an action, {len(twice)} with two or more",
    )


def _actions(session: Session, st: Stack) -> tuple[dict[str, int], list[Check]]:
    """The actions' states, and the provider's refunds per action."""
    rows = session.execute(
        select(
            Action.id,
            Action.shop_id,
            Action.provider,
            Action.target,
            Action.status,
            Action.next_check_at,
        )
    ).all()
    braked = set(
        session.scalars(select(ShopBrakes.shop_id).where(ShopBrakes.tripped_at.is_not(None)))
    )
    statuses = collections.Counter(str(row.status) for row in rows)
    submitting = [r.id for r in rows if r.status == ActionStatus.SUBMITTING]
    queued_loose = [
        r.id for r in rows if r.status == ActionStatus.QUEUED and r.shop_id not in braked
    ]
    unscheduled = [
        r.id for r in rows if r.status == ActionStatus.UNKNOWN and r.next_check_at is None
    ]
    refunds = _stripe_refunds(st)
    refunds.update(_shopify_refunds(st, [r for r in rows if r.provider == "shopify"]))
    twice, unrecorded, phantom = [], [], []
    for row in rows:
        made = refunds.get(str(row.id), 0)
        if made > 1:
            twice.append(row.id)
        elif made and (
            row.status in NOT_SENT or row.status in (ActionStatus.QUEUED, ActionStatus.REJECTED)
        ):
            unrecorded.append(row.id)
        elif not made and row.status in PROVIDER_REPORTED - {ActionStatus.REJECTED}:
            phantom.append(row.id)
    return dict(statuses), [
        Check(
            "actions: none left submitting",
            not submitting,
            f"{len(submitting)} submitting",
        ),
        Check(
            "actions: none queued unless its shop's brake holds it",
            not queued_loose,
            f"{len(queued_loose)} queued without a brake; "
            f"{statuses.get(ActionStatus.QUEUED, 0) - len(queued_loose)} held by a brake",
        ),
        Check(
            "actions: every unknown one has its look-up scheduled",
            not unscheduled,
            f"{statuses.get(ActionStatus.UNKNOWN, 0)} unknown, {len(unscheduled)} with none",
        ),
        Check(
            "provider: at most one refund per action",
            not twice,
            f"{len(rows)} actions, {sum(refunds.values())} refunds carrying an action id, "
            f"{len(twice)} actions with two or more",
        ),
        Check(
            "provider: no refund for an action recorded as not sent or still queued",
            not unrecorded,
            f"{len(unrecorded)}",
        ),
        Check(
            "provider: every action recorded as the provider's has its refund there",
            not phantom,
            f"{len(phantom)} without one",
        ),
    ]


def _stripe_refunds(st: Stack) -> collections.Counter[str]:
    """Refunds at the Stripe sandbox per action id (their metadata)."""
    listed = st.stripe_client.v1.refunds.list(params={"limit": 100}).auto_paging_iter()
    return collections.Counter(
        str(metadata["caseward_action_id"])
        for metadata in (refund.to_dict().get("metadata") or {} for refund in listed)
        if "caseward_action_id" in metadata
    )


def _shopify_refunds(st: Stack, rows: list[Any]) -> collections.Counter[str]:
    """Refunds at the Shopify sandbox per action id (the marker their note ends with),
    read from each order a Shopify action targets."""
    bench = st.shopify_bench
    client = AdminClient(bench.domain, bench.access_token, bench.auth.http_client)
    counted: collections.Counter[str] = collections.Counter()
    for target in {row.target for row in rows}:
        order = read_order(client, target)
        assert order is not None
        counted.update(
            action_id for refund in order.refunds if (action_id := action_id_in(refund.note))
        )
    return counted


# ------------------------------------------------------------------ the figures


def surface_figures(ran: Ran, tally: dict[str, collections.Counter[str]]) -> list[dict[str, Any]]:
    """Per surface: requests (every attempt), a second over the load, p50/p95/p99 in ms
    (locust's), and the answers by what they mean."""
    made = []
    for surface in RATES:
        entry = ran.environment.stats.get(surface, "POST")
        made.append(
            {
                "surface": surface,
                "requests": entry.num_requests,
                "per_second": round(entry.num_requests / ran.seconds, 2),
                "p50_ms": entry.get_response_time_percentile(0.5),
                "p95_ms": entry.get_response_time_percentile(0.95),
                "p99_ms": entry.get_response_time_percentile(0.99),
                "answers": dict(sorted(tally[surface].items())),
            }
        )
    return made


def print_figures(
    surfaces: list[dict[str, Any]], ran: Ran, drained: float, statuses: dict[str, int]
) -> None:
    print(
        f"\n{'surface':<16} {'requests':>8} {'a second':>9} {'p50 ms':>7} {'p95 ms':>7} "
        f"{'p99 ms':>7}  answers"
    )
    for row in surfaces:
        answers = ", ".join(f"{key}: {count}" for key, count in row["answers"].items())
        print(
            f"{row['surface']:<16} {row['requests']:>8} {row['per_second']:>9.2f} "
            f"{row['p50_ms']:>7.0f} {row['p95_ms']:>7.0f} {row['p99_ms']:>7.0f}  {answers}"
        )
    print(
        f"load {ran.seconds:.0f} s; deliveries still unacknowledged after {OWED_SECONDS:.0f} s "
        f"of resending: {ran.owed_left}; queues drained in {drained:.0f} s"
    )
    print("actions: " + ", ".join(f"{s} {n}" for s, n in sorted(statuses.items())))


def refusals_by_fault(ran: Ran, refused: list[tuple[str, float, str]]) -> list[dict[str, Any]]:
    """The answers not accepted, counted by the fault they came during (from its start to
    :data:`AFTERMATH` seconds after its end) or outside every fault."""
    rows = []
    left = list(refused)
    for fault in ran.happened:
        during = [r for r in left if fault.began <= r[1] <= fault.ended + AFTERMATH]
        left = [r for r in left if r not in during]
        rows.append({"fault": fault.name, "refused": _counted(during)})
    rows.append({"fault": "none", "refused": _counted(left)})
    return rows


def _counted(refused: list[tuple[str, float, str]]) -> dict[str, int]:
    return dict(
        sorted(collections.Counter(f"{surface} {answer}" for surface, _, answer in refused).items())
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="minutes of load")
    parser.add_argument("--workers", type=int, default=3, help="RQ worker processes")
    parser.add_argument(
        "--faults",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="cause the faults of load_faults.py during the load",
    )
    args = parser.parse_args()
    # Stopped from outside, the stack's processes and database are still cleaned up.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    seconds = args.minutes * 60
    print(
        f"load over every surface for {args.minutes:g} min, {args.workers} workers, "
        f"faults {'on' if args.faults else 'off'}; {os.cpu_count()} cores, load average "
        f"{' '.join(f'{v:.2f}' for v in os.getloadavg())}",
        flush=True,
    )
    with stack(args.workers, args.minutes) as st:
        ran = load(st, seconds, args.faults)
        drained = drain(st)
        checks, statuses, attempts = invariants(st)
        web_errors = errors_logged(st.web_log)
    surfaces = surface_figures(ran, st.plan.tally)
    print_figures(surfaces, ran, drained, statuses)
    print("attempts at the provider: " + ", ".join(f"{k} {n}" for k, n in attempts.items()))
    print(
        f"workers started again: {len(st.supervisor.killed)} killed, "
        f"{len(st.supervisor.quit)} quit on their own"
    )
    by_fault = refusals_by_fault(ran, st.plan.refused)
    print(f"answers not accepted, by the fault they came during (or {AFTERMATH:g} s after):")
    for row in by_fault:
        shown = ", ".join(f"{k} {n}" for k, n in row["refused"].items()) or "none"
        print(f"  {row['fault']}: {shown}")
    for surface, bodies in st.plan.failures.items():
        for body in bodies:
            print(f"  a {surface} answered {body}")
    print(f"errors the web logged ({sum(web_errors.values())}):")
    for error, count in web_errors.most_common():
        print(f"  {count} x {error}")
    print("\ninvariants:")
    for check in checks:
        print(f"  {'held ' if check.held else 'BROKE'}  {check.name}: {check.detail}")
    load_average = os.getloadavg()
    print(f"load average at the end: {' '.join(f'{v:.2f}' for v in load_average)}")
    record(
        "load_faults" if args.faults else "load",
        {
            "minutes": args.minutes,
            "workers": args.workers,
            "faults": args.faults,
            "seconds_of_load": round(ran.seconds, 1),
            "surfaces": surfaces,
            "faults_caused": [
                {
                    "fault": h.name,
                    "began_s": round(h.began, 1),
                    "ended_s": round(h.ended, 1),
                    "detail": h.detail,
                }
                for h in ran.happened
            ],
            "refused_by_fault": by_fault,
            "refused_at": [
                {"surface": surface, "at_s": round(at, 1), "answer": answer}
                for surface, at, answer in st.plan.refused
            ],
            "first_5xx_answers": dict(st.plan.failures),
            "web_errors": dict(web_errors),
            "workers_killed": len(st.supervisor.killed),
            "workers_quit": len(st.supervisor.quit),
            "unacknowledged_after_resending": ran.owed_left,
            "drain_seconds": round(drained, 1),
            "actions_by_status": statuses,
            "attempts_by_outcome": attempts,
            "invariants": [{"check": c.name, "held": c.held, "detail": c.detail} for c in checks],
        },
    )
    if not all(check.held for check in checks):
        sys.exit(1)


if __name__ == "__main__":
    main()
