"""The load benchmark's users (``bench_load.py``): one locust user class per surface.

Each user sends what its surface's caller sends, signed as that caller signs it, to the
web app served by gunicorn, through locust's library API (no web UI):

* :class:`StripeWebhooks`: ``refund.updated`` events signed with the connection's
  ``whsec_`` secret as Stripe signs them (``Stripe-Signature``), one in five naming one of
  the shop's actions in its metadata;
* :class:`ShopifyWebhooks`: ``orders/updated`` for the Shopify shop's customer, the raw
  body's HMAC-SHA256 in ``X-Shopify-Hmac-Sha256`` and Shopify's other headers;
* :class:`GorgiasCalls`: the customer writes on a ticket in the Gorgias sandbox, then the
  HTTP integration's call (the body the README has the merchant set) with the shop's
  secret header;
* :class:`WidgetMessages`: a signed-in shopper's chat message through the app proxy, its
  query signed as Shopify's proxy signs it;
* :class:`Approvals`: a person approving a waiting refund proposal (Stripe or Shopify)
  through the staff API with their bearer token;
* :class:`McpCalls`: an agent's tool calls (``read_case``, ``list_orders_and_payments``,
  ``action_status``) as JSON-RPC on the streamable HTTP endpoint ``/mcp``.

A delivery a provider makes (webhooks, helpdesk calls) and an approval are sent again,
with the same event id or the same digest, when the answer is a 5xx or never comes, as
the provider (or a person clicking again) would, after 1, 2, 4 ... up to 15 s; one in
twenty webhooks is sent twice on purpose (a provider's redelivery). A shopper's message
and an agent's read are not sent again: a new one comes instead. Every answer is
counted per surface by what it means (:data:`Tally`); the latencies are locust's.
"""

from __future__ import annotations

import collections
import itertools
import json
import random
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from bench_drafting import ChatShop
from locust import FastHttpUser, constant_throughput, task
from shopify_support import signed_proxy_query, webhook_signature

from app.helpdesk.connection import SECRET_HEADER
from integrations.stripe.sandbox.webhooks import signature_header

REDELIVERED_EVERY = 20
NAMING_AN_ACTION_EVERY = 5
RETRY_CEILING = 15.0

Tally = dict[str, collections.Counter[str]]


@dataclass
class Pending:
    """A delivery to send again: its request, when it is due, and how often it failed."""

    send: Callable[[Any], str]
    due: float
    failures: int


@dataclass
class Plan:
    """What the users share: where to send, what to sign with, the seeded pools, and what
    came back. Filled by ``bench_load.py`` before the load starts."""

    stripe_connection: str
    stripe_secret: str
    shopify_domain: str
    shopify_secret: str
    shopify_customer_gid: str
    shopify_orders: list[str]
    gorgias_connection: str
    gorgias_secret: str
    gorgias_tickets: list[int]
    gorgias_control: Callable[[str, str, dict[str, object] | None], Any]
    chat: ChatShop
    app_proxy_secret: str
    approver_tokens: dict[str, str]  # by provider
    proposals: collections.deque[tuple[str, uuid.UUID, str]]  # (provider, id, digest)
    agent_secret: str
    cases: list[str]
    tally: Tally = field(default_factory=lambda: collections.defaultdict(collections.Counter))
    # What each surface had acknowledged: event ids, call keys, message ids, approvals.
    acknowledged: dict[str, set[str]] = field(default_factory=lambda: collections.defaultdict(set))
    sent: dict[str, set[str]] = field(default_factory=lambda: collections.defaultdict(set))
    # The actions approvals made, by provider.
    actions: dict[str, list[str]] = field(default_factory=lambda: collections.defaultdict(list))
    retries: dict[str, list[Pending]] = field(default_factory=lambda: collections.defaultdict(list))
    # Set as the load ends: no new delivery is made, the requests under way finish.
    stopping: bool = False
    in_flight: int = 0
    # Every answer not accepted: (surface, seconds from ``started``, the answer).
    started: float = 0.0
    refused: list[tuple[str, float, str]] = field(default_factory=list)
    # The first bodies of each surface's 5xx answers, to tell what failed.
    failures: dict[str, list[str]] = field(default_factory=lambda: collections.defaultdict(list))


def outcome(status: int, error: object) -> str:
    """What an answer is called in the tally: its status, or how the connection failed."""
    if status == 0:
        return f"no answer ({type(error).__name__})" if error else "no answer"
    return str(status)


class SurfaceUser(FastHttpUser):
    """A caller of one surface; ``surface`` names it in locust's statistics and the tally."""

    abstract = True
    plan: ClassVar[Plan]
    surface: ClassVar[str]
    # Longer than the provider timeouts a request may wait on, shorter than a window.
    network_timeout = 30.0
    connection_timeout = 5.0

    def post(
        self,
        path: str,
        body: bytes,
        headers: dict[str, str],
        accepted: tuple[int, ...],
        surface: str | None = None,
    ) -> tuple[int, Any]:
        """POST, tallied and timed under ``surface`` (the user's own unless given: a
        delivery sent again after the load by another user); returns the status (0: no
        answer) and the JSON answer, if any."""
        surface = surface or self.surface
        self.plan.in_flight += 1
        try:
            return self._post(path, body, headers, accepted, surface)
        finally:
            self.plan.in_flight -= 1

    def _post(
        self,
        path: str,
        body: bytes,
        headers: dict[str, str],
        accepted: tuple[int, ...],
        surface: str,
    ) -> tuple[int, Any]:
        with self.client.post(
            path, data=body, headers=headers, name=surface, catch_response=True
        ) as response:
            status = response.status_code or 0
            # A connection that failed leaves its error on the response; an answer, none.
            self.plan.tally[surface][outcome(status, getattr(response, "error", None))] += 1
            try:
                answer = json.loads(response.content or b"null") if status else None
            except ValueError:
                answer = None
            if status in accepted:
                response.success()
            else:
                response.failure(f"{status}")
                moment = time.monotonic() - self.plan.started
                self.plan.refused.append((surface, moment, outcome(status, None)))
                if status >= 500 and len(self.plan.failures[surface]) < 3:
                    text = (response.content or b"")[:300].decode(errors="replace").strip()
                    self.plan.failures[surface].append(f"{status} at {moment:.0f} s: {text}")
            return status, answer

    def send_or_retry(self, make: Callable[[], Callable[[Any], str]]) -> None:
        """Send a due retry of this surface if there is one, else a new delivery made by
        ``make``. A delivery answered ``retry`` is kept to be sent again later."""
        if self.plan.stopping:
            return
        waiting = self.plan.retries[self.surface]
        now = time.monotonic()
        due = next((p for p in waiting if p.due <= now), None)
        if due is not None:
            waiting.remove(due)
            send, failures = due.send, due.failures
        else:
            send, failures = make(), 0
        if send(self) == "retry":
            pause = min(RETRY_CEILING, 2.0**failures)
            waiting.append(Pending(send, time.monotonic() + pause, failures + 1))


class StripeWebhooks(SurfaceUser):
    abstract = True
    surface = "stripe webhook"
    counter = itertools.count()

    @task
    def deliver(self) -> None:
        self.send_or_retry(self._event)

    def _event(self) -> Callable[[Any], str]:
        plan = self.plan
        surface = self.surface
        number = next(self.counter)
        ours = plan.actions["stripe"]
        action_id = random.choice(ours) if ours and number % NAMING_AN_ACTION_EVERY == 0 else None
        event_id = f"evt_load{uuid.uuid4().hex[:20]}"
        body = json.dumps(
            {
                "id": event_id,
                "object": "event",
                "api_version": "2025-08-27.basil",
                "created": int(time.time()),
                "livemode": False,
                "pending_webhooks": 1,
                "type": "refund.updated",
                "data": {
                    "object": {
                        "id": f"re_load{uuid.uuid4().hex[:20]}",
                        "object": "refund",
                        "amount": 4800,
                        "currency": "usd",
                        "status": "succeeded",
                        "metadata": {"caseward_action_id": action_id} if action_id else {},
                    }
                },
            }
        )
        plan.sent[self.surface].add(event_id)
        redeliver = number % REDELIVERED_EVERY == 0

        def send(user: Any) -> str:
            headers = {
                "Content-Type": "application/json",
                # Signed at each attempt, as Stripe does: the timestamp is the attempt's.
                "Stripe-Signature": signature_header(body, plan.stripe_secret, int(time.time())),
            }
            path = f"/webhooks/stripe/{plan.stripe_connection}"
            times = 2 if redeliver else 1
            for _ in range(times):
                status, _ = user.post(path, body.encode(), headers, (200,), surface)
                if status != 200:
                    return "retry"
            plan.acknowledged[surface].add(event_id)
            return "done"

        return send


class ShopifyWebhooks(SurfaceUser):
    abstract = True
    surface = "shopify webhook"
    counter = itertools.count()

    @task
    def deliver(self) -> None:
        self.send_or_retry(self._event)

    def _event(self) -> Callable[[Any], str]:
        plan = self.plan
        surface = self.surface
        number = next(self.counter)
        order_gid = random.choice(plan.shopify_orders)
        event_id = str(uuid.uuid4())
        raw = json.dumps(
            {
                "id": int(order_gid.rpartition("/")[2]),
                "admin_graphql_api_id": order_gid,
                "updated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "customer": {
                    "id": int(plan.shopify_customer_gid.rpartition("/")[2]),
                    "admin_graphql_api_id": plan.shopify_customer_gid,
                },
            }
        ).encode()
        plan.sent[self.surface].add(event_id)
        redeliver = number % REDELIVERED_EVERY == 0

        def send(user: Any) -> str:
            for _ in range(2 if redeliver else 1):
                headers = {
                    "Content-Type": "application/json",
                    "X-Shopify-Topic": "orders/updated",
                    "X-Shopify-Shop-Domain": plan.shopify_domain,
                    # A new webhook id at every attempt, one event id across them.
                    "X-Shopify-Webhook-Id": str(uuid.uuid4()),
                    "X-Shopify-Event-Id": event_id,
                    "X-Shopify-Triggered-At": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "X-Shopify-API-Version": "2026-04",
                    "X-Shopify-Hmac-Sha256": webhook_signature(raw, plan.shopify_secret),
                }
                status, _ = user.post("/webhooks/shopify", raw, headers, (200,), surface)
                if status != 200:
                    return "retry"
            plan.acknowledged[surface].add(event_id)
            return "done"

        return send


class GorgiasCalls(SurfaceUser):
    abstract = True
    surface = "gorgias call"
    counter = itertools.count()

    @task
    def deliver(self) -> None:
        self.send_or_retry(self._call)

    def _call(self) -> Callable[[Any], str]:
        plan = self.plan
        surface = self.surface
        number = next(self.counter)
        ticket_id = random.choice(plan.gorgias_tickets)
        written = plan.gorgias_control(
            "POST",
            f"/tickets/{ticket_id}/customer_writes",
            {"body_text": f"Any news on my order? (message {number})"},
        )
        message_id = int(written["message_id"])
        key = f"message:{message_id}"
        body = json.dumps(
            {
                "event": "ticket-message-created",
                "ticket_id": ticket_id,
                "message_id": message_id,
                "updated": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()),
            }
        ).encode()
        plan.sent[self.surface].add(key)
        redeliver = number % REDELIVERED_EVERY == 0

        def send(user: Any) -> str:
            headers = {"Content-Type": "application/json", SECRET_HEADER: plan.gorgias_secret}
            path = f"/helpdesk/gorgias/{plan.gorgias_connection}/events"
            for _ in range(2 if redeliver else 1):
                status, _ = user.post(path, body, headers, (200,), surface)
                if status != 200:
                    return "retry"
            plan.acknowledged[surface].add(key)
            return "done"

        return send


class WidgetMessages(SurfaceUser):
    abstract = True
    surface = "widget message"

    @task
    def say(self) -> None:
        plan = self.plan
        if plan.stopping:
            return
        customer, text = random.choice(plan.chat.messages)
        query = signed_proxy_query(
            {
                "shop": plan.chat.domain,
                "logged_in_customer_id": customer,
                "path_prefix": "/apps/caseward",
                "timestamp": str(int(time.time())),
            },
            plan.app_proxy_secret,
        )
        body = json.dumps({"conversation": None, "text": text}).encode()
        status, answer = self.post(
            f"/proxy/chat/messages?{query}",
            body,
            {"Content-Type": "application/json"},
            (201,),
        )
        if status == 201 and isinstance(answer, dict):
            for message in answer.get("messages", []):
                if message.get("from") == "customer":
                    plan.acknowledged[self.surface].add(str(message["id"]))


class Approvals(SurfaceUser):
    abstract = True
    surface = "approval"

    @task
    def approve(self) -> None:
        self.send_or_retry(self._approval)

    def _approval(self) -> Callable[[Any], str]:
        plan = self.plan
        surface = self.surface
        if not plan.proposals:
            return lambda user: "done"
        provider, proposal_id, digest = plan.proposals.popleft()
        plan.sent[self.surface].add(str(proposal_id))
        body = json.dumps({"digest": digest}).encode()

        def send(user: Any) -> str:
            headers = {
                "Content-Type": "application/json",
                "Authorization": f"Bearer {plan.approver_tokens[provider]}",
            }
            # 409: approved by an earlier attempt whose answer was lost (the proposal is
            # no longer waiting); the action is the first attempt's.
            status, answer = user.post(
                f"/api/proposals/{proposal_id}/approve", body, headers, (200, 201, 409), surface
            )
            if status >= 500 or status == 0:
                return "retry"
            if status in (200, 201) and isinstance(answer, dict) and answer.get("action"):
                plan.actions[provider].append(str(answer["action"]["id"]))
            plan.acknowledged[surface].add(str(proposal_id))
            return "done"

        return send


class McpCalls(SurfaceUser):
    abstract = True
    surface = "mcp call"
    counter = itertools.count()

    @task
    def call(self) -> None:
        plan = self.plan
        if plan.stopping:
            return
        number = next(self.counter)
        tools: list[tuple[str, dict[str, str]]] = [
            ("read_case", {"case_id": random.choice(plan.cases)}),
            ("list_orders_and_payments", {"case_id": random.choice(plan.cases)}),
        ]
        # The agent's credential is the Stripe shop's: it reads that shop's actions.
        if plan.actions["stripe"]:
            tools.append(("action_status", {"action_id": random.choice(plan.actions["stripe"])}))
        name, arguments = tools[number % len(tools)]
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": number,
                "method": "tools/call",
                "params": {"name": name, "arguments": arguments},
            }
        ).encode()
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {plan.agent_secret}",
            "MCP-Protocol-Version": "2025-06-18",
        }
        status, answer = self.post("/mcp", body, headers, (200,))
        if status == 200 and isinstance(answer, dict):
            result = answer.get("result") or {}
            if answer.get("error") or result.get("isError"):
                # Answered, but the tool refused: counted apart from a served call.
                plan.tally[self.surface]["200, tool refused"] += 1


SURFACES: tuple[type[SurfaceUser], ...] = (
    StripeWebhooks,
    ShopifyWebhooks,
    GorgiasCalls,
    WidgetMessages,
    Approvals,
    McpCalls,
)


def users(
    plan: Plan, host: str, rates: dict[str, float], per_surface: dict[str, int]
) -> list[type[SurfaceUser]]:
    """Each surface's user class bound to ``plan``: ``per_surface`` users sharing the
    surface's ``rates`` (requests a second)."""
    made = []
    for base in SURFACES:
        count = per_surface[base.surface]
        made.append(
            type(
                base.__name__,
                (base,),
                {
                    "abstract": False,
                    "plan": plan,
                    "host": host,
                    "fixed_count": count,
                    "wait_time": constant_throughput(rates[base.surface] / count),
                },
            )
        )
    return made


def send_what_is_owed(plan: Plan, user: SurfaceUser, deadline: float) -> int:
    """After the load, keep sending the deliveries not yet acknowledged, as the provider
    keeps retrying, until none is left or ``deadline`` (monotonic); returns those left."""
    while time.monotonic() < deadline:
        waiting = [(surface, p) for surface, ps in plan.retries.items() for p in ps]
        if not waiting:
            return 0
        for surface, pending in waiting:
            plan.retries[surface].remove(pending)
            if pending.send(user) == "retry":
                plan.retries[surface].append(
                    Pending(pending.send, time.monotonic() + 1.0, pending.failures + 1)
                )
        time.sleep(1.0)
    return sum(len(ps) for ps in plan.retries.values())
