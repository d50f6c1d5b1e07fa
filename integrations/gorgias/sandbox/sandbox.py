"""The sandbox as an object: accounts, tickets, the rate limit, HTTP integrations, controls.

:class:`GorgiasSandbox` serves Gorgias' account and ticket API (``GET /api/account``,
tickets and their messages) for every account it holds, each at
its own domain: requests find their account by the ``Host: {name}.gorgias.com`` header,
as at Gorgias. Serving over HTTP, time, faults, holds, latency, the request log and the
delivery switches come from the shared kit's
:class:`~integrations.sandbox_kit.SandboxBase`. Every control the ``/_sandbox/`` routes
offer is a method here too, so in-process tests steer the sandbox without HTTP, among
them what happens in the helpdesk itself: a customer opens a ticket or writes, an agent
writes, a ticket is closed.

The sequence of one API request (:meth:`GorgiasSandbox.handle_api`): record its arrival
(a posted message's ``external_id`` in the log's key column); find the account by its
Host and the route (else 404); check basic auth against the account's API users (else
401); count it in the account's rate limit (else 429 with ``Retry-after``); refuse a
method the path lacks (405); ask the fault board for its plan (drop, 500, hold, delay);
run it under the store's lock and, once it is stored, queue the integrations' calls it
triggers; let after-commit faults drop or spoil the answer; record the answer. Every
answer to an admitted request carries the account's ``X-Gorgias-Account-Api-Call-Limit``.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import parse_qs

from integrations.sandbox_kit import FAULT_HEADER, Clock, Dispatch, Fault, Response, SandboxBase

from .api import (
    ApiError,
    account_messages,
    check_message,
    check_ticket,
    json_response,
    message_page,
    store_message,
    store_ticket,
)
from .control import gorgias_control_router
from .http_integrations import (
    DELIVERY_TIMEOUT,
    FAILURE_LIMIT,
    RETRY_DELAYS,
    HttpIntegrations,
    IntegrationConfig,
)
from .ratelimit import CALL_LIMIT_HEADER, AccountLimits
from .state import INTERNAL_NOTE, Account, ApiUser, Message, Store, Ticket, User

JSON = dict[str, Any]

ACCOUNT_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_TICKET = re.compile(r"^/api/tickets/(\d+)/?$")
_MESSAGES = re.compile(r"^/api/tickets/(\d+)/messages/?$")
_TICKETS = re.compile(r"^/api/tickets/?$")
_MESSAGE_LIST = re.compile(r"^/api/messages/?$")
_ACCOUNT = re.compile(r"^/api/account/?$")
# Events an API request causes, queued once the request is stored: (trigger, ticket, message).
Triggered = list[tuple[str, int, int | None]]


def domain_for(name: str) -> str:
    """``linen-and-loom`` (or its domain) as ``linen-and-loom.gorgias.com``."""
    bare = name.strip().lower().removesuffix(".gorgias.com")
    if not ACCOUNT_NAME.fullmatch(bare):
        raise ValueError(f"not an account name: {name!r}")
    return f"{bare}.gorgias.com"


def _host(headers: Mapping[str, str]) -> str:
    return (headers.get("Host") or "").partition(":")[0].strip().lower()


def _posted_external_id(method: str, body: bytes) -> str | None:
    """A posted message's ``external_id``, for the request log (``None`` otherwise)."""
    if method.upper() != "POST" or not body:
        return None
    try:
        document = json.loads(body)
    except ValueError:
        return None
    value = document.get("external_id") if isinstance(document, dict) else None
    return value if isinstance(value, str) else None


def _basic_credentials(headers: Mapping[str, str]) -> tuple[str, str] | None:
    scheme, _, encoded = (headers.get("Authorization") or "").partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    username, colon, password = decoded.partition(":")
    return (username, password) if colon else None


def _pause(ms: int) -> None:
    if ms > 0:
        time.sleep(ms / 1000.0)


class GorgiasSandbox(SandboxBase):
    """An in-memory Gorgias: accounts by domain, their tickets, API and integrations."""

    serving_name = "gorgias-sandbox"

    def __init__(
        self,
        *,
        clock: Clock | None = None,
        control_token: str | None = None,
        rate_limit: AccountLimits | None = None,
        integration_retry_delays: Sequence[float] = RETRY_DELAYS,
        integration_timeout: float = DELIVERY_TIMEOUT,
        integration_failure_limit: int = FAILURE_LIMIT,
        background_interval: float = 0.25,
    ) -> None:
        super().__init__(
            clock=clock, control_token=control_token, background_interval=background_interval
        )
        self.store = Store()
        self.limits = rate_limit or AccountLimits()
        self.integrations = HttpIntegrations(
            now=self.now,
            retry_delays=integration_retry_delays,
            timeout=integration_timeout,
            failure_limit=integration_failure_limit,
        )

    # -- serving ---------------------------------------------------------------------------

    def _control(self) -> Dispatch:
        return gorgias_control_router(self).handle

    def _failure(self) -> Response:
        """Gorgias' answer when the sandbox itself fails."""
        return ApiError(500, "Internal server error").response()

    @property
    def _deliveries(self) -> HttpIntegrations:
        return self.integrations

    def process_due(self) -> int:
        """Nothing in this sandbox waits for the clock (the rate limit drains as it moves)."""
        return 0

    def handle_api(
        self, method: str, target: str, headers: Mapping[str, str], body: bytes
    ) -> Response:
        """Serve one API request, recording it as it arrives and then its answer."""
        domain = _host(headers)
        with self.store.lock:
            known = domain in self.store.accounts
        external_id = _posted_external_id(method, body)
        entry = self.received.arrived(method, target, domain if known else None, external_id)
        response = self._serve(method.upper(), target, headers, body, domain, external_id)
        self.received.answered(entry, response)
        return response

    def _serve(
        self,
        method: str,
        target: str,
        headers: Mapping[str, str],
        body: bytes,
        domain: str,
        external_id: str | None,
    ) -> Response:
        _pause(self.faults.latency_ms)
        path, _, query = target.partition("?")
        admitted = self._admit(method, path, headers, domain)
        if isinstance(admitted, Response):
            return admitted
        account, limit_header = admitted
        try:
            plan = self.faults.plan_for(
                method, path, external_id, domain, headers.get(FAULT_HEADER)
            )
        except ValueError as exc:
            return ApiError(400, f"Invalid {FAULT_HEADER} header: {exc}").response(limit_header)
        if plan.drop_before or plan.error_before:
            _pause(plan.delay_before_ms)
            return Response(drop=True) if plan.drop_before else self._failure()
        self.faults.wait_at_holds(plan)
        _pause(plan.delay_before_ms)
        response = self._execute(method, path, query, body, account, limit_header)
        if plan.error_after:
            response = self._failure()
        _pause(plan.delay_after_ms)
        return Response(drop=True) if plan.drop_after else response

    def _admit(
        self, method: str, path: str, headers: Mapping[str, str], domain: str
    ) -> tuple[Account, dict[str, str]] | Response:
        """Account, route, credentials and rate limit checked, in that order: the account
        and the call-limit header, or the refusal."""
        with self.store.lock:
            account = self.store.accounts.get(domain)
            api_users = dict(self._api_keys(account)) if account is not None else {}
        allowed = _allowed_methods(path)
        if account is None or not allowed:
            return ApiError(404, "Not found").response()
        if not _authenticated(headers, api_users):
            return ApiError(401, "Unauthorized: wrong or missing API credentials").response(
                {"WWW-Authenticate": 'Basic realm="Gorgias"'}
            )
        admission = self.limits.admit(domain, self.now())
        limit_header = {CALL_LIMIT_HEADER: admission.header}
        if admission.retry_after is not None:
            return ApiError(429, "Too many requests").response(
                {**limit_header, "Retry-after": str(admission.retry_after)}
            )
        if method not in allowed:
            return ApiError(405, "Method not allowed").response(limit_header)
        return account, limit_header

    def _api_keys(self, account: Account) -> Iterable[tuple[str, str]]:
        return ((u.email.lower(), u.api_key) for u in account.users.values() if u.api_key)

    def _execute(
        self,
        method: str,
        path: str,
        query: str,
        body: bytes,
        account: Account,
        headers: Mapping[str, str],
    ) -> Response:
        triggered: Triggered = []
        try:
            with self.store.lock:
                status, answer = self._route(method, path, query, body, account, triggered)
        except ApiError as refused:
            return refused.response(headers)
        for trigger, ticket_id, message_id in triggered:
            self._fire(trigger, ticket_id, message_id)
        return json_response(status, answer, headers)

    def _route(
        self,
        method: str,
        path: str,
        query: str,
        body: bytes,
        account: Account,
        triggered: Triggered,
    ) -> tuple[int, Any]:
        if _ACCOUNT.match(path):
            return 200, account.api_json()
        if _MESSAGE_LIST.match(path):
            return 200, account_messages(self.store, account, parse_qs(query))
        if _TICKETS.match(path):
            ticket_draft = check_ticket(account, _json_body(body))
            created = store_ticket(self.store, account, ticket_draft, self.now())
            triggered.append(("ticket-created", created.id, None))
            return 201, self.store.ticket_json(created)
        found = _TICKET.match(path) or _MESSAGES.match(path)
        assert found is not None
        ticket = self.store.tickets.get(int(found.group(1)))
        if ticket is None or ticket.account != account.domain:
            raise ApiError(404, "Ticket not found")
        if _TICKET.match(path):
            return 200, self.store.ticket_json(ticket)
        if method == "GET":
            uri = f"/api/tickets/{ticket.id}/messages"
            return 200, message_page(ticket.messages, uri, parse_qs(query))
        draft = check_message(account, _json_body(body))
        message = store_message(self.store, account, ticket, draft, self.now())
        triggered.append(("ticket-message-created", ticket.id, message.id))
        return 201, message.to_json()

    def _fire(self, trigger: str, ticket_id: int, message_id: int | None) -> None:
        """Queue ``trigger``'s integration calls, rendered from the ticket as it is now."""
        with self.store.lock:
            ticket = self.store.ticket(ticket_id)
            document = self.store.ticket_json(ticket)
            message = next(
                (m for m in document["messages"] if m["id"] == message_id),
                document["messages"][-1] if document["messages"] else None,
            )
        self.integrations.fire(ticket.account, trigger, {"ticket": document, "message": message})

    # -- accounts --------------------------------------------------------------------------

    def create_account(
        self,
        name: str,
        *,
        api_users: Sequence[ApiUser] = (),
        support_address: str | None = None,
    ) -> str:
        """Create the account ``{name}.gorgias.com`` with its API users; returns its domain.
        Customers write to ``support_address`` (default ``support@{name}.example``)."""
        domain = domain_for(name)
        with self.store.lock:
            if domain in self.store.accounts:
                raise ValueError(f"account {domain} already exists")
            bare = domain.removesuffix(".gorgias.com")
            self.store.accounts[domain] = Account(
                domain, support_address or f"support@{bare}.example", self.now()
            )
        for user in api_users:
            self.add_user(domain, user.email, api_key=user.api_key, name=user.name)
        return domain

    def add_user(
        self, domain: str, email: str, *, api_key: str | None = None, name: str | None = None
    ) -> int:
        """Add an agent to the account (an API user when ``api_key`` is given); its id."""
        if "@" not in email or (api_key is not None and not api_key):
            raise ValueError("a user needs an email, and an API user a non-empty key")
        with self.store.lock:
            account = self.store.account(domain_for(domain))
            if account.user_by_email(email) is not None:
                raise ValueError(f"{email} is already a user of {account.domain}")
            user = User(self.store.next_id("user"), email, name or email.partition("@")[0], api_key)
            account.users[user.id] = user
            return user.id

    def account(self, domain: str) -> JSON:
        """The account: its domain, support address and users (keys left out)."""
        with self.store.lock:
            return self.store.account(domain_for(domain)).to_json()

    def throttle(self, domain: str, seconds: float) -> None:
        """Spend the account's rate limit: its requests are refused 429 for ``seconds``."""
        domain = domain_for(domain)
        with self.store.lock:
            self.store.account(domain)
        self.limits.throttle(domain, self.now(), seconds)

    # -- what happens in the helpdesk ------------------------------------------------------

    def open_ticket(
        self,
        domain: str,
        *,
        customer_email: str,
        subject: str,
        body_text: str,
        customer_name: str | None = None,
        channel: str = "email",
    ) -> int:
        """A customer writes in (``email`` or ``chat``), opening a ticket; its id.
        Fires ``ticket-created``."""
        via = "gorgias_chat" if channel == "chat" else channel
        message = {
            "channel": channel,
            "via": via,
            "from_agent": False,
            "body_text": body_text,
            "subject": subject,
            "sender": {"email": customer_email, "name": customer_name},
        }
        request = {"subject": subject, "channel": channel, "via": via, "messages": [message]}
        with self.store.lock:
            account = self.store.account(domain_for(domain))
            draft = check_ticket(account, request)
            ticket = store_ticket(self.store, account, draft, self.now())
        self._fire("ticket-created", ticket.id, None)
        return ticket.id

    def customer_writes(self, ticket_id: int, text: str) -> int:
        """The ticket's customer writes again on the ticket's channel; the message's id.
        Fires ``ticket-message-created``."""
        with self.store.lock:
            ticket = self.store.ticket(ticket_id)
            customer = self.store.customer_of(ticket)
            request = {
                "channel": ticket.channel,
                "via": ticket.via,
                "from_agent": False,
                "body_text": text,
                "sender": {"id": customer.id},
            }
            message = self._add(ticket, request)
        self._fire("ticket-message-created", ticket_id, message.id)
        return message.id

    def agent_writes(
        self, ticket_id: int, text: str, *, internal: bool = False, user_email: str | None = None
    ) -> int:
        """An agent answers in the helpdesk (``internal``: an internal note), as
        ``user_email`` or the account's first user; the message's id. Fires
        ``ticket-message-created``."""
        with self.store.lock:
            ticket = self.store.ticket(ticket_id)
            account = self.store.accounts[ticket.account]
            user = account.user_by_email(user_email) if user_email else None
            user = user or next(iter(account.users.values()), None)
            if user is None:
                raise ValueError(f"{account.domain} has no such user")
            request: JSON = {
                "channel": INTERNAL_NOTE if internal else ticket.channel,
                "via": "helpdesk",
                "from_agent": True,
                "body_text": text,
                "sender": {"id": user.id},
            }
            if not internal:
                request["receiver"] = {"id": ticket.customer_id}
            message = self._add(ticket, request)
        self._fire("ticket-message-created", ticket_id, message.id)
        return message.id

    def _add(self, ticket: Ticket, request: JSON) -> Message:
        account = self.store.accounts[ticket.account]
        draft = check_message(account, request)
        return store_message(self.store, account, ticket, draft, self.now())

    def set_status(self, ticket_id: int, status: str) -> None:
        """An agent opens or closes the ticket. Fires ``ticket-updated``."""
        if status not in ("open", "closed"):
            raise ValueError("status must be open or closed")
        with self.store.lock:
            ticket = self.store.ticket(ticket_id)
            now = self.now()
            ticket.status, ticket.updated = status, now
            ticket.closed = now if status == "closed" else None
        self._fire("ticket-updated", ticket_id, None)

    def ticket(self, ticket_id: int) -> JSON:
        """The ticket as ``GET /api/tickets/{id}`` shows it (no auth, no rate limit)."""
        with self.store.lock:
            return self.store.ticket_json(self.store.ticket(ticket_id))

    # -- HTTP integrations -----------------------------------------------------------------

    def add_integration(
        self,
        domain: str,
        *,
        url: str,
        body_template: str,
        triggers: Sequence[str],
        headers: Mapping[str, str] | None = None,
        method: str = "POST",
        name: str | None = None,
    ) -> JSON:
        """Configure an HTTP integration of the account; its Integration object."""
        config = IntegrationConfig(
            url=url,
            body_template=body_template,
            triggers=tuple(triggers),
            method=method,
            headers=dict(headers or {}),
            name=name,
        )
        return self.add_integration_config(domain, config)

    def add_integration_config(self, domain: str, config: IntegrationConfig) -> JSON:
        """Configure an already checked integration (the control route's way in)."""
        domain = domain_for(domain)
        with self.store.lock:
            self.store.account(domain)
        return self.integrations.add(domain, config).to_json()

    def integration(self, integration_id: int) -> JSON:
        """One integration, with its consecutive failures and deactivation time."""
        return self.integrations.get(integration_id)

    def account_integrations(self, domain: str) -> list[JSON]:
        """The account's integrations, oldest first."""
        return self.integrations.of_account(domain_for(domain))

    # -- faults ----------------------------------------------------------------------------

    def arm_fault(
        self,
        kind: str,
        *,
        method: str | None = None,
        path: str | None = None,
        external_id: str | None = None,
        account: str | None = None,
        count: int = 1,
        ms: int = 0,
        when: str = "before",
    ) -> Fault:
        """Arm a fault for the next ``count`` requests matching every given filter
        (``path`` and ``external_id`` may be globs such as ``/api/tickets/*/messages``)."""
        return self.faults.arm(
            Fault(
                kind=kind,
                method=method,
                path=path,
                idempotency_key=external_id,
                account=domain_for(account) if account else None,
                count=count,
                ms=ms,
                when=when,
            )
        )

    # -- state -----------------------------------------------------------------------------

    def reset(self) -> None:
        """Forget every account, ticket, integration, fault, rate count and request."""
        with self.store.lock:
            self.store.clear()
        self.limits.clear()
        self.integrations.clear()
        self.faults.clear()
        self.received.clear()


def _allowed_methods(path: str) -> tuple[str, ...]:
    if _TICKETS.match(path):
        return ("POST",)
    if _MESSAGE_LIST.match(path) or _ACCOUNT.match(path):
        return ("GET",)
    if _TICKET.match(path):
        return ("GET",)
    if _MESSAGES.match(path):
        return ("GET", "POST")
    return ()


def _authenticated(headers: Mapping[str, str], api_users: Mapping[str, str]) -> bool:
    credentials = _basic_credentials(headers)
    if credentials is None:
        return False
    expected = api_users.get(credentials[0].strip().lower())
    return expected is not None and hmac.compare_digest(
        expected.encode("utf-8"), credentials[1].encode("utf-8")
    )


def _json_body(body: bytes) -> object:
    try:
        return json.loads(body) if body.strip() else None
    except ValueError:
        raise ApiError(400, "Invalid request: the body is not JSON") from None
