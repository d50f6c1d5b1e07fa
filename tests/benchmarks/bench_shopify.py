"""Benchmark: the embedded admin's pages in a busy shop, and a Shopify refund's whole path.

    make bench   (or: .venv/bin/python tests/benchmarks/bench_money_path.py --only shopify
                  [--cases 1000] [--page-requests 100] [--calls 100])

Runs the Shopify sandbox as its own process, with the app installed in one shop by a real
token exchange, on the database, Redis and worker processes of ``bench_money_path``. It
prints:

* the server time of the embedded case page (``GET /app/cases/<id>``), the case queue
  (``GET /app/cases``), the day's page (``GET /app``) and the queue searched by a case
  number, an order number, a customer's email and a status (a later page), with 1,000
  cases in the shop (``--cases 10000`` for the admin's goal), p50 and p95 beside the goal
  (p95 under 100 ms), and the SQL statements each request runs. Requests go through the
  Flask app in-process (its test client, no HTTP server in front), each carrying a fresh
  session token minted by the sandbox with the app's secret, so verification, the shop
  and the person are read as in production;
* a direct ``refundCreate`` through :class:`~integrations.shopify.graphql.AdminClient`
  (the order's payment already known, as an app that kept it would have it) versus
  Caseward from the approve API call to Shopify's status recorded on the action, with
  the sandbox answering at once and with 250 ms added to every call; and which GraphQL
  operations one of Caseward's refunds sends.

The 1,000 cases are seeded by ORM inserts, not through the API (seconds, not minutes):
each with its own customer and one or two orders, a refund proposal carrying the
verdict a real proposal got from the sandbox, and for half of them an approval, an
action, its attempts and the audit events each step writes (through ``audit.record``,
so the shop's chain holds).
"""

from __future__ import annotations

import statistics
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from bench_money_path import (
    APPROVER,
    REPO,
    WARM_UP,
    Sandbox,
    approval_to_status,
    percentile,
    sandbox_process,
    worker_env,
)
from benchmarks.figures import record
from flask import Flask
from sqlalchemy import event
from sqlalchemy.orm import Session, sessionmaker

from app import audit, create_app
from app.actors import WORKER, Actor, Surface, staff
from app.approvals.drafts import parse_draft
from app.approvals.service import create_proposal
from app.cases.digest import digest_of
from app.cases.models import Case, CaseStatus, Customer, Order, case_reference
from app.cases.proposals import Approval, Proposal, ProposalStatus
from app.cases.service import open_case
from app.clock import utcnow
from app.connections.adapters import connection_adapters
from app.connections.models import Connection
from app.crypto import SecretBox, secret_box
from app.db import Database
from app.execution.models import Action, ActionAttempt, ActionStatus
from app.settings import Settings
from app.shopify.install import record_install
from app.shops.models import Shop, StaffMember, StaffRole
from app.shops.service import set_writes_enabled
from integrations.provider import ProviderStatus
from integrations.shopify._adapter_facts import payments, read_order
from integrations.shopify.auth import AdminVerified, ShopifyAuth
from integrations.shopify.documents import REFUND_CREATE, refund_create_variables
from integrations.shopify.graphql import AdminClient
from integrations.shopify.money import Amount

sys.path.insert(0, str(REPO / "tests" / "shopify_app"))
from admin_pages_support import page_url

# The app credentials the sandbox is started with: made up for the benchmark.
API_KEY = "caseward-bench-client-id"
API_SECRET = "shpss_caseward_bench_app_secret_0123456789"
OWNER = "1001"  # the sandbox shop's account owner, admitted as owner at install
APRON = 4800
PAGE_GOAL_MS = 100
DAY = timedelta(days=1)


# ------------------------------------------------------------------ the shop


@dataclass
class ShopifyBench:
    settings: Settings
    sandbox: Sandbox
    app: Flask
    session_factory: sessionmaker[Session]
    domain: str
    shop_id: uuid.UUID
    access_token: str
    auth: ShopifyAuth
    customer_gid: str


def install(settings: Settings, sandbox: Sandbox) -> ShopifyBench:
    """A sandbox shop with the app installed by token exchange, writes on, an approver
    with room to approve, and one customer at Shopify who pays for every order."""
    domain = sandbox.control("POST", "/shops", {"name": f"bench-{uuid.uuid4().hex[:6]}"})["domain"]
    auth = ShopifyAuth(API_KEY, API_SECRET, api_base=sandbox.url)
    verified = auth.verify_admin_request(
        "GET",
        "https://caseward.example.com/app",
        {"Authorization": f"Bearer {session_token(sandbox, domain)}"},
        b"",
        patch_id_token_path="/app/patch-id-token",
    )
    assert isinstance(verified, AdminVerified), verified
    token = auth.exchange_offline_token(verified)
    app = create_app(settings)
    factory = Database.state(app).session_factory
    now = utcnow()
    owner = staff(OWNER, Surface.SHOPIFY_ADMIN)
    customer_gid = sandbox.control(
        "POST",
        f"/shops/{domain}/customers",
        {"email": "buyer@example.com", "first_name": "Bench", "last_name": "Buyer"},
    )["id"]
    with factory() as session:
        shop = record_install(
            session,
            domain=domain,
            token=token,
            currency="usd",
            installer=owner,
            installer_is_account_owner=True,
            installer_email=None,
            box=secret_box(settings),
            now=now,
        )
        session.add(
            StaffMember(
                shop_id=shop.id,
                user_id=APPROVER,
                role=StaffRole.APPROVER,
                approval_limits={"usd": 1_000_000},
            )
        )
        session.flush()
        set_writes_enabled(session, shop=shop, actor=owner, enabled=True, now=now)
        session.commit()
        shop_id = shop.id
    return ShopifyBench(
        settings, sandbox, app, factory, domain, shop_id, token.token, auth, customer_gid
    )


def session_token(sandbox: Sandbox, domain: str, user_id: str = OWNER) -> str:
    """A session token as the Shopify admin hands one to the app (a minute of life)."""
    answer = sandbox.control("POST", f"/shops/{domain}/session_token", {"user_id": int(user_id)})
    return str(answer["token"])


@dataclass(frozen=True)
class RefundableOrder:
    gid: str
    line_gid: str
    payment_gid: str
    gateway: str


def refundable_orders(bench: ShopifyBench, count: int) -> list[RefundableOrder]:
    """``count`` paid orders of the bench's customer, two aprons each, delivered two days
    ago; read back once through GraphQL for their line and payment ids."""
    delivered = time.time() - 2 * DAY.total_seconds()
    client = AdminClient(bench.domain, bench.access_token, bench.auth.http_client)
    made = []
    for _ in range(count):
        gid = bench.sandbox.control(
            "POST",
            f"/shops/{bench.domain}/orders",
            {
                "customer_id": bench.customer_gid,
                "currency": "USD",
                "lines": [{"title": "Linen apron, natural", "quantity": 2, "price": APRON}],
                "fulfilled_at": delivered,
                "delivered_at": delivered,
            },
        )["id"]
        order = read_order(client, gid)
        assert order is not None
        [payment] = payments(order)
        assert payment.gateway is not None
        made.append(RefundableOrder(gid, order.lines[0].id, payment.id, payment.gateway))
    return made


def refund_proposals(
    bench: ShopifyBench, orders: list[RefundableOrder]
) -> list[tuple[uuid.UUID, str]]:
    """One apron's refund proposed per order, each on its own case, awaiting approval."""
    proposer = staff(APPROVER, Surface.STAFF_API)
    made = []
    with bench.session_factory() as session:
        shop = session.get(Shop, bench.shop_id)
        assert shop is not None
        customer = Customer(
            shop_id=shop.id,
            email="buyer@example.com",
            name="Bench Buyer",
            shopify_customer_id=bench.customer_gid,
        )
        session.add(customer)
        session.flush()
        adapter = connection_adapters(bench.settings, secret_box(bench.settings))(
            session, shop.id, "shopify"
        )
        for order in orders:
            case = open_case(
                session,
                shop=shop,
                actor=proposer,
                customer_id=customer.id,
                subject="One apron arrived torn",
                request_text="",
                identity_level="strong",
                now=utcnow(),
            )
            result = create_proposal(
                session,
                shop=shop,
                case=case,
                actor=proposer,
                draft=parse_draft(
                    {
                        "kind": "refund",
                        "target": order.gid,
                        "amount": APRON,
                        "currency": "usd",
                        "line_items": [{"line_id": order.line_gid, "amount": APRON, "quantity": 1}],
                    }
                ),
                adapter=adapter,
                settings=bench.settings,
                now=utcnow(),
            )
            assert result.proposal.status == "awaiting_approval", result.proposal.verdict
            made.append((result.proposal.id, result.proposal.digest))
        session.commit()
    return made


def set_up_for_the_day(bench: ShopifyBench) -> None:
    """A Stripe key on record beside Shopify, so the app opens on the day's page rather
    than its setup (the key is never used here)."""
    with bench.session_factory() as session:
        session.add(
            Connection(
                shop_id=bench.shop_id,
                provider="stripe",
                livemode=False,
                encrypted_secret=b"unused",
                key_hint="rk_test_...bench",
                created_by="bench",
            )
        )
        session.commit()


# ------------------------------------------------------------------ 1,000 cases


@dataclass(frozen=True)
class Template:
    """What a real proposal in this shop looks like once checked: its verdict and the
    policy version and approvals it was checked under."""

    verdict: dict[str, Any]
    policy_version: int
    approvals_required: int


def template_of(bench: ShopifyBench, proposal_id: uuid.UUID) -> Template:
    with bench.session_factory() as session:
        proposal = session.get(Proposal, proposal_id)
        assert proposal is not None
        return Template(proposal.verdict, proposal.policy_version, proposal.approvals_required)


# Each seeded case's story by its number modulo 10: waiting for approval (4 in 10),
# refunded (4), blocked by a check (1), sent with no answer known yet (1).
_WAITING, _REFUNDED, _BLOCKED, _UNCLEAR = "waiting", "refunded", "blocked", "unclear"
_STORIES = (_WAITING,) * 4 + (_REFUNDED,) * 4 + (_BLOCKED, _UNCLEAR)


def seed_cases(bench: ShopifyBench, count: int, template: Template) -> list[uuid.UUID]:
    """``count`` cases in the bench's shop, spread over the last 30 days; returns their ids."""
    approver = staff(APPROVER, Surface.SHOPIFY_ADMIN)
    now = utcnow()
    case_ids = []
    with bench.session_factory() as session:
        for number in range(count):
            opened = now - timedelta(days=30) * (count - number) / count
            case_ids.append(_seed_case(session, bench.shop_id, number, opened, template, approver))
            if number % 100 == 99:
                session.commit()
        session.commit()
    return case_ids


def _seed_case(
    session: Session,
    shop_id: uuid.UUID,
    number: int,
    opened: datetime,
    template: Template,
    approver: Actor,
) -> uuid.UUID:
    story = _STORIES[number % len(_STORIES)]
    customer_gid = f"gid://shopify/Customer/{700_000 + number}"
    customer = Customer(
        shop_id=shop_id,
        email=f"customer{number}@example.com",
        name=f"Customer {number}",
        shopify_customer_id=customer_gid,
        created_at=opened - 40 * DAY,
    )
    session.add(customer)
    session.flush()
    orders = [
        _order(shop_id, customer.id, f"#{10_000 + 2 * number + extra}", opened - (9 + extra) * DAY)
        for extra in range(1 + number % 2)
    ]
    case = Case(
        shop_id=shop_id,
        customer_id=customer.id,
        subject=f"Order {orders[0].name}: one item arrived damaged",
        request_text=(
            "Hello, one of the aprons in my order arrived with a torn seam. "
            "Could you refund that one? I can send a photo if that helps."
        ),
        identity_level="claim" if story == _BLOCKED else "strong",
        created_at=opened,
        updated_at=opened,
    )
    session.add_all([*orders, case])
    session.flush()
    line = orders[0].lines[0]
    proposal = Proposal(
        shop_id=shop_id,
        case_id=case.id,
        kind="refund",
        provider="shopify",
        target=orders[0].shopify_order_id,
        customer_ref=customer_gid,
        amount=APRON,
        currency="usd",
        line_items=[{"line_id": line["id"], "amount": APRON, "quantity": 1}],
        money_ref=orders[0].shopify_order_id,
        params={"reason": "One apron arrived torn."},
        reason="One apron arrived torn.",
        proposed_by=approver.ref,
        status=ProposalStatus.BLOCKED if story == _BLOCKED else ProposalStatus.AWAITING_APPROVAL,
        verdict=_blocked(template.verdict) if story == _BLOCKED else template.verdict,
        approvals_required=template.approvals_required,
        policy_version=template.policy_version,
        digest="",
        created_at=opened + timedelta(minutes=2),
    )
    proposal.digest = digest_of(proposal, proposal.policy_version)
    session.add(proposal)
    session.flush()
    record = _Recorder(session, shop_id, case.id)
    record("case.opened", approver, opened, {"identity_level": case.identity_level})
    record(
        "proposal.created",
        approver,
        opened + timedelta(minutes=2),
        {"proposal_id": str(proposal.id), "previous": None, "status": proposal.status},
    )
    if story == _BLOCKED:
        return case.id
    case.status = CaseStatus.AWAITING_APPROVAL
    record("case.status_changed", approver, opened + timedelta(minutes=2), _moved("open", case))
    if story == _WAITING:
        return case.id
    _seed_action(session, case, proposal, story, opened + timedelta(hours=3), approver, record)
    return case.id


def _order(shop_id: uuid.UUID, customer_id: uuid.UUID, name: str, placed: datetime) -> Order:
    number = int(name.removeprefix("#"))
    gid = f"gid://shopify/Order/{500_000 + number}"
    return Order(
        shop_id=shop_id,
        customer_id=customer_id,
        name=name,
        currency="usd",
        total=2 * APRON + 1500,
        payment_provider="shopify",
        payment_id=gid,
        shopify_order_id=gid,
        lines=[
            {
                "id": f"gid://shopify/LineItem/{800_000 + 2 * number}",
                "title": "Linen apron, natural",
                "quantity": 2,
                "paid": 2 * APRON,
            },
            {
                "id": f"gid://shopify/LineItem/{800_001 + 2 * number}",
                "title": "Tea towel set",
                "quantity": 1,
                "paid": 1500,
            },
        ],
        fulfilled_at=placed + DAY,
        delivered_at=placed + 4 * DAY,
        created_at=placed,
    )


def _blocked(verdict: dict[str, Any]) -> dict[str, Any]:
    """The verdict with its first check failing as an unidentified customer's would."""
    checks = [dict(check) for check in verdict.get("checks", [])]
    if checks:
        checks[0] |= {"passed": False, "reason": "the customer is not identified (claim)"}
    return {**verdict, "outcome": "blocked", "checks": checks}


def _moved(previous: str, row: Case | Action) -> dict[str, Any]:
    return {"previous": previous, "status": row.status}


class _Recorder:
    """Audit events of one case, each appended to the shop's chain as the app does."""

    def __init__(self, session: Session, shop_id: uuid.UUID, case_id: uuid.UUID) -> None:
        self._session, self._shop_id, self._case_id = session, shop_id, case_id

    def __call__(
        self,
        kind: str,
        actor: Actor,
        at: datetime,
        data: dict[str, Any],
        action_id: uuid.UUID | None = None,
    ) -> None:
        audit.record(
            self._session,
            shop_id=self._shop_id,
            kind=kind,
            actor=actor,
            case_id=self._case_id,
            action_id=action_id,
            data=data,
            now=at,
        )


def _seed_action(
    session: Session,
    case: Case,
    proposal: Proposal,
    story: str,
    approved_at: datetime,
    approver: Actor,
    record: _Recorder,
) -> None:
    """The approval, the action it made, its attempts and their events."""
    action_id = uuid.uuid4()
    key = f"caseward-action-{action_id}"
    approval = Approval(
        shop_id=case.shop_id,
        proposal_id=proposal.id,
        digest=proposal.digest,
        approver=approver.id,
        created_at=approved_at,
        expires_at=approved_at + DAY,
        consumed_by_action=action_id,
    )
    sent_at = approved_at + timedelta(seconds=1)
    refunded = story == _REFUNDED
    action = Action(
        id=action_id,
        shop_id=case.shop_id,
        case_id=case.id,
        proposal_id=proposal.id,
        proposal_revision=proposal.revision,
        digest=proposal.digest,
        kind=proposal.kind,
        provider=proposal.provider,
        target=proposal.target,
        customer_ref=proposal.customer_ref,
        amount=proposal.amount,
        currency=proposal.currency,
        line_items=list(proposal.line_items),
        params=dict(proposal.params),
        money_ref=proposal.money_ref,
        idempotency_key=key,
        status=ActionStatus.SUCCEEDED if refunded else ActionStatus.UNKNOWN,
        provider_ref=f"gid://shopify/Refund/{case.id.int % 10**9}" if refunded else None,
        first_sent_at=sent_at,
        submitted_at=sent_at,
        attempts_made=1,
        approved_by=[approver.id],
        approval_expires_at=approval.expires_at,
        created_at=approved_at,
        updated_at=sent_at,
    )
    proposal.status = ProposalStatus.APPROVED
    case.status = CaseStatus.RESOLVED if refunded else CaseStatus.NEEDS_ATTENTION
    case.owner = None if refunded else approver.ref
    case.updated_at = sent_at
    session.add_all([approval, action])
    session.flush()
    session.add(
        ActionAttempt(
            action_id=action_id,
            number=1,
            purpose="submit",
            idempotency_key=key,
            started_at=sent_at,
            finished_at=sent_at + timedelta(milliseconds=300),
            outcome="answered" if refunded else "unknown",
            provider_ref=action.provider_ref,
            provider_status=ProviderStatus.SUCCEEDED if refunded else None,
            detail=None if refunded else "the connection dropped before Shopify answered",
        )
    )
    proposal_data = {"proposal_id": str(proposal.id), "digest": proposal.digest}
    record("proposal.approved", approver, approved_at, proposal_data)
    record(
        "proposal.status_changed",
        approver,
        approved_at,
        {**proposal_data, "previous": "awaiting_approval", "status": "approved"},
    )
    record("case.status_changed", approver, approved_at, _moved("awaiting_approval", case))
    record(
        "action.queued",
        approver,
        approved_at,
        {"idempotency_key": key, "kind": "refund", "target": proposal.target, "amount": APRON},
        action_id,
    )
    record(
        "action.submit", WORKER, sent_at, {"previous": "queued", "status": "submitting"}, action_id
    )
    if refunded:
        record(
            "action.provider_status",
            WORKER,
            sent_at,
            {"provider_ref": action.provider_ref, **_moved("submitting", action)},
            action_id,
        )
        record("case.status_changed", WORKER, sent_at, _moved("executing", case))
    else:
        record("action.unknown", WORKER, sent_at, _moved("submitting", action), action_id)
        record(
            "case.needs_attention", WORKER, sent_at, {"owner": case.owner, "status": case.status}
        )


# ------------------------------------------------------------------ measurements


@contextmanager
def counted_statements(app: Flask) -> Iterator[list[int]]:
    """A one-item list holding how many SQL statements the app's engine ran since it was
    last reset to 0."""
    engine = Database.state(app).engine
    counter = [0]

    def count(*_: object) -> None:
        counter[0] += 1

    event.listen(engine, "before_cursor_execute", count)
    try:
        yield counter
    finally:
        event.remove(engine, "before_cursor_execute", count)


def page_times(bench: ShopifyBench, paths: list[str]) -> tuple[list[float], list[int]]:
    """Seconds and SQL statements per request of each admin page in ``paths``, after one
    untimed request that loads the templates."""
    client = bench.app.test_client()
    samples, statements = [], []
    with counted_statements(bench.app) as counter:
        for number, path in enumerate([paths[0], *paths]):
            url = page_url(bench.domain, path, session_token(bench.sandbox, bench.domain))
            counter[0] = 0
            started = time.perf_counter()
            response = client.get(url)
            elapsed = time.perf_counter() - started
            if response.status_code != 200:
                raise RuntimeError(f"{path} answered {response.status_code}")
            if number:
                samples.append(elapsed)
                statements.append(counter[0])
    return samples, statements


def full_bucket(bench: ShopifyBench) -> None:
    """Refill the shop's query-cost bucket (2,000 points, 100 a second). Each of
    Caseward's order reads asks for 659 points up front and keeps about 30, so refunds
    sent back to back drain it within a dozen and Shopify throttles every one after:
    refilled before each sample, the series measure a shop below its rate limit."""
    bench.sandbox.control("POST", f"/shops/{bench.domain}/cost_bucket", {"available": 2000})


def direct_refunds(bench: ShopifyBench, orders: list[RefundableOrder]) -> list[float]:
    """One ``refundCreate`` per order, as an app calling Shopify itself would send it."""
    client = AdminClient(bench.domain, bench.access_token, bench.auth.http_client)
    samples = []
    for order in orders:
        full_bucket(bench)
        variables = refund_create_variables(
            key=f"bench-{uuid.uuid4()}",
            order_id=order.gid,
            parent_transaction_id=order.payment_gid,
            gateway=order.gateway,
            amount=Amount(APRON, "usd"),
            line_items=[(order.line_gid, 1)],
        )
        started = time.perf_counter()
        client.execute(REFUND_CREATE, variables, operation_name="RefundCreate")
        samples.append(time.perf_counter() - started)
    return samples


def operations_per_refund(bench: ShopifyBench, count: int) -> str:
    """The GraphQL operations ``count`` of Caseward's refunds sent, per refund."""
    received = bench.sandbox.control("GET", f"/shops/{bench.domain}/requests")
    made = Counter(r["operation"] for r in received if r["path"].endswith("/graphql.json"))
    return ", ".join(f"{name} {seen / count:g}" for name, seen in sorted(made.items()))


def milliseconds(samples: list[float]) -> tuple[float, float]:
    return statistics.median(samples) * 1000, percentile(samples, 0.95) * 1000


# ------------------------------------------------------------------ the run


def shopify_figures(settings: Settings, *, calls: int, cases: int, requests: int) -> None:
    """Print the admin pages' server times and the Shopify refund latency series."""
    with sandbox_process("shopify", "--api-key", API_KEY, "--api-secret", API_SECRET) as sandbox:
        settings = replace(
            settings,
            encryption_keys=(SecretBox.generate_key(),),
            shopify_api_key=API_KEY,
            shopify_api_secret=API_SECRET,
            shopify_api_base=sandbox.url,
        )
        bench = install(settings, sandbox)
        env = worker_env(
            settings,
            SHOPIFY_API_KEY=API_KEY,
            SHOPIFY_API_SECRET=API_SECRET,
            SHOPIFY_API_BASE=sandbox.url,
        )
        latencies = (0, 250)
        todo = refund_proposals(bench, refundable_orders(bench, calls * len(latencies)))
        direct_orders = refundable_orders(bench, calls * len(latencies))
        started = time.perf_counter()
        seeded = seed_cases(bench, cases, template_of(bench, todo[0][0]))
        seeding = time.perf_counter() - started
        set_up_for_the_day(bench)
        print(
            f"shop of {cases + len(todo):,} cases ({cases:,} seeded in {seeding:.1f} s), "
            f"{requests} requests a page, Flask in-process, real session tokens"
        )
        print(f"{'admin page':>27} | {'server time (ms)':>23} | goal p95    | SQL statements")
        pages: list[dict[str, Any]] = []
        case_pages = [f"/app/cases/{seeded[n * cases // requests]}" for n in range(requests)]
        picked = [n * cases // requests for n in range(requests)]
        for name, paths in (
            ("case GET /app/cases/<id>", case_pages),
            ("queue GET /app/cases", ["/app/cases"] * requests),
            ("today GET /app", ["/app"] * requests),
            (
                "search: a case number",
                [f"/app/cases?q={case_reference(seeded[n])}" for n in picked],
            ),
            ("search: an order number", [f"/app/cases?q=%23{10_000 + 2 * n}" for n in picked]),
            ("search: a customer", [f"/app/cases?q=customer{n}%40example" for n in picked]),
            ("search: status, page 5", ["/app/cases?status=resolved&page=5"] * requests),
        ):
            samples, statements = page_times(bench, paths)
            p50, p95 = milliseconds(samples)
            standing = "met" if p95 < PAGE_GOAL_MS else "missed"
            print(
                f"{name:>27} | p50 {p50:7.1f} p95 {p95:7.1f} | <{PAGE_GOAL_MS} {standing:6} | "
                f"{min(statements)}-{max(statements)} a request"
            )
            pages.append(
                {"page": name, "p50_ms": round(p50, 2), "p95_ms": round(p95, 2)}
                | {"statements": [min(statements), max(statements)]}
            )

        print(
            f"\n{'provider latency':>16} | {'direct refundCreate':>22} | "
            f"{'Caseward approval→status':>26} | ratio (median)"
        )
        operations = ""
        ratios: list[dict[str, float]] = []
        for series, latency in enumerate(latencies):
            sandbox.control("POST", "/latency", {"ms": latency})
            part = slice(series * calls, (series + 1) * calls)
            direct = direct_refunds(bench, direct_orders[part])
            sandbox.control("DELETE", "/requests")
            samples = approval_to_status(
                settings, bench.shop_id, todo[part], env, sandbox, lambda: full_bucket(bench)
            )
            path = [sample.recorded for sample in samples[WARM_UP:]]
            operations = operations or operations_per_refund(bench, calls)
            (d50, d95), (c50, c95) = milliseconds(direct), milliseconds(path)
            print(
                f"{latency:>13} ms | p50 {d50:7.1f} p95 {d95:7.1f} | p50 {c50:8.1f} p95 {c95:8.1f}"
                f" | {c50 / d50:5.2f}x"
            )
            ratios.append(
                {"latency_ms": latency, "direct_p50_ms": round(d50, 2)}
                | {"path_p50_ms": round(c50, 2), "ratio": round(c50 / d50, 3)}
            )
        sandbox.control("POST", "/latency", {"ms": 0})
        print(f"GraphQL calls per Caseward refund: {operations}")
        bench.auth.close()
    record(
        "shopify",
        {
            "cases": cases + len(todo),
            "requests_per_page": requests,
            "goal_p95_ms": PAGE_GOAL_MS,
            "pages": pages,
            "refund_against_direct_call": ratios,
            "graphql_calls_per_refund": operations,
        },
    )
