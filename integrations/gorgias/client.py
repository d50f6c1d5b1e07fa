"""Gorgias' REST API for one account: read it and its tickets, post a reply or a note once.

Requests go to ``https://{name}.gorgias.com/api/...`` with HTTP basic auth (the API
user's email and API key) and JSON, through one :class:`httpx.Client` per instance.
``api_base`` sends them to the sandbox instead, keeping the ``Host: {name}.gorgias.com``
header by which it tells accounts apart; pointing Caseward at the sandbox is a
configuration change, not a code change.

Every request first takes a token from the account's budget
(:mod:`integrations.gorgias.budget`: in Redis, shared by every process of the deployment,
when the client is given :class:`SharedBudgets`; else the process's), sleeping when it is
empty. A 429 ran nothing: the budget is emptied until ``Retry-after`` has passed and the
request goes again, for as long as Gorgias' waits add up to no more than
``max_rate_limit_wait_s``. The waits are counted, not the 429s: a client drawing on
another budget of the account (a process's own, a client outside Caseward) can take the
room a short ``Retry-after`` frees, several times over, while the account is far from
refusing for long.
Other 4xx raise :class:`GorgiasRefused`. All waiting goes through the injected
``clock`` and ``sleep``.

A message is posted exactly once. Its ``external_id`` is the caller's ``our_id``; the
sequence of :meth:`GorgiasClient.post_reply` and :meth:`GorgiasClient.post_internal_note`:

1. If the caller says it ``already_tried`` this ``our_id``, look first (step 4).
2. POST it. A 201 is the answer; a 4xx refusal is raised.
3. Nothing sent (connection refused, connect timeout): POST again.
4. Unclear (timeout, dropped connection, 5xx, an unreadable 2xx): list the ticket's
   messages (``GET /api/messages?ticket_id=``), newest first, for one whose
   ``external_id`` is ``our_id``. Found: that is
   the answer (``found_by_lookup``). Absent: POST again.
5. After ``max_sends`` POSTs without an answer, raise :class:`GorgiasUnavailable`;
   ``maybe_posted`` says whether one of them may still land, so the caller comes back
   with ``already_tried=True``.

Neither the API key nor a message body reaches a log line or an exception's text.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Mapping
from typing import Any, NoReturn, TypeVar

import httpx

from .budget import PROCESS_BUDGETS, Budget, Budgets
from .documents import (
    AccountInfo,
    BadAnswer,
    PostedMessage,
    ReplyChannel,
    Ticket,
    account_from,
    note_payload,
    posted_from,
    reply_payload,
    ticket_from,
)
from .errors import GorgiasRefused, GorgiasUnavailable, Reason

_log = logging.getLogger(__name__)

Parsed = TypeVar("Parsed")

ACCOUNT_DOMAIN = re.compile(r"^[a-z0-9][a-z0-9-]*\.gorgias\.com$")
# Gorgias' largest page of a ticket's messages.
_PAGE_SIZE = 100
# Without a readable Retry-after, wait this long after a 429.
_DEFAULT_RETRY_AFTER_S = 1.0
# How much of Gorgias' own error message a refusal keeps.
_MESSAGE_KEPT = 200


def account_domain(domain_url: str) -> str:
    """``https://name.gorgias.com`` (or ``name.gorgias.com``) as ``name.gorgias.com``."""
    host = httpx.URL(domain_url if "://" in domain_url else f"https://{domain_url}").host
    if not ACCOUNT_DOMAIN.fullmatch(host):
        raise ValueError(f"not a Gorgias account: {domain_url!r} (expected name.gorgias.com)")
    return host


class _NothingSent(Exception):
    """The request never left: sending it again cannot duplicate anything."""

    def __init__(self, reason: Reason) -> None:
        super().__init__(reason)
        self.reason: Reason = reason


class _Unclear(Exception):
    """The request may have been carried out; only a look settles it."""

    def __init__(self, reason: Reason, status: int | None = None) -> None:
        super().__init__(reason)
        self.reason: Reason = reason
        self.status = status


class GorgiasClient:
    """One Gorgias account, as one API user."""

    def __init__(
        self,
        domain_url: str,
        username: str,
        api_key: str,
        *,
        timeout_s: float,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        api_base: str | None = None,
        budgets: Budgets = PROCESS_BUDGETS,
        max_rate_limit_wait_s: float = 60.0,
        max_sends: int = 3,
    ) -> None:
        if not username or not api_key:
            raise ValueError("a Gorgias API user needs an email and an API key")
        if max_sends < 1:
            raise ValueError("max_sends must be at least 1")
        self.domain = account_domain(domain_url)
        self.username = username
        self._clock = clock
        self._sleep = sleep
        self._budget: Budget = budgets.for_account(self.domain)
        self._max_rate_limit_wait_s = max_rate_limit_wait_s
        self._max_sends = max_sends
        self._http = httpx.Client(
            base_url=api_base or f"https://{self.domain}",
            auth=httpx.BasicAuth(username, api_key),
            headers={"Host": self.domain, "Accept": "application/json"},
            timeout=timeout_s,
            follow_redirects=False,
        )

    def __repr__(self) -> str:
        return f"GorgiasClient(domain={self.domain!r}, username={self.username!r})"

    def close(self) -> None:
        """Close the connections."""
        self._http.close()

    def __enter__(self) -> GorgiasClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reads -----------------------------------------------------------------------------

    def account(self) -> AccountInfo:
        """The account these credentials open: the cheapest proof that they work.
        Raises :class:`GorgiasRefused` (401: wrong credentials) or
        :class:`GorgiasUnavailable`."""
        return _read(account_from, self._get("/api/account"))

    def ticket(self, ticket_id: int) -> Ticket:
        """The ticket with its customer and messages. Raises :class:`GorgiasRefused`
        (404: no such ticket) or :class:`GorgiasUnavailable`."""
        return _read(ticket_from, self._get(f"/api/tickets/{int(ticket_id)}"))

    def find_posted(self, ticket_id: int, our_id: str) -> PostedMessage | None:
        """The message of ``ticket_id`` whose ``external_id`` is ``our_id``, if any."""
        cursor: str | None = None
        while True:
            params: dict[str, str | int] = {
                "ticket_id": int(ticket_id),
                "limit": _PAGE_SIZE,
                "order_by": "created_datetime:desc",
            }
            if cursor:
                params["cursor"] = cursor
            page = self._get("/api/messages", params=params)
            if not isinstance(page, Mapping) or not isinstance(page.get("data"), list):
                raise GorgiasUnavailable("bad_answer")
            for message in page["data"]:
                if isinstance(message, Mapping) and message.get("external_id") == our_id:
                    return _read(lambda m: posted_from(m, found_by_lookup=True), message)
            meta = page.get("meta")
            cursor = meta.get("next_cursor") if isinstance(meta, Mapping) else None
            if not cursor:
                return None

    # -- writes ----------------------------------------------------------------------------

    def post_reply(
        self,
        ticket_id: int,
        *,
        body_text: str,
        our_id: str,
        sender_email: str,
        receiver_email: str,
        channel: ReplyChannel = "email",
        already_tried: bool = False,
    ) -> PostedMessage:
        """Post a public reply from the shop's agent ``sender_email`` to the customer
        ``receiver_email``; Gorgias sends it on ``channel``. At most one message carries
        ``our_id``, however often this is called with it."""
        payload = reply_payload(
            body_text=body_text,
            our_id=our_id,
            sender_email=sender_email,
            receiver_email=receiver_email,
            channel=channel,
        )
        return self._post_once(int(ticket_id), payload, our_id, already_tried)

    def post_internal_note(
        self, ticket_id: int, *, body_text: str, our_id: str, already_tried: bool = False
    ) -> PostedMessage:
        """Post an internal note as the API user; the customer never sees it. At most one
        message carries ``our_id``, however often this is called with it."""
        payload = note_payload(body_text=body_text, our_id=our_id, sender_email=self.username)
        return self._post_once(int(ticket_id), payload, our_id, already_tried)

    def _post_once(
        self, ticket_id: int, payload: Mapping[str, Any], our_id: str, already_tried: bool
    ) -> PostedMessage:
        path = f"/api/tickets/{ticket_id}/messages"
        maybe_posted = already_tried
        reason: Reason = "connection"
        status: int | None = None
        sends = 0
        while True:
            if maybe_posted:
                found = self._look_for(ticket_id, our_id)
                if found is not None:
                    return found
            if sends == self._max_sends:
                raise GorgiasUnavailable(reason, status=status, maybe_posted=maybe_posted)
            sends += 1
            try:
                answer = self._send("POST", path, json=payload)
            except _NothingSent as failure:
                reason, status = failure.reason, None
                continue
            except _Unclear as failure:
                reason, status, maybe_posted = failure.reason, failure.status, True
                _log.warning(
                    "posting message %s to Gorgias ticket %s is unclear (%s): looking for it",
                    our_id,
                    ticket_id,
                    failure.reason,
                )
                continue
            try:
                return posted_from(answer)
            except BadAnswer:
                reason, status, maybe_posted = "bad_answer", None, True

    def _look_for(self, ticket_id: int, our_id: str) -> PostedMessage | None:
        try:
            return self.find_posted(ticket_id, our_id)
        except GorgiasUnavailable as failure:
            raise GorgiasUnavailable(
                failure.reason,
                status=failure.status,
                retry_after_s=failure.retry_after_s,
                maybe_posted=True,
            ) from None

    # -- the wire --------------------------------------------------------------------------

    def _get(self, path: str, *, params: Mapping[str, str | int] | None = None) -> Any:
        """A read: whatever went wrong is :class:`GorgiasUnavailable` (reads change
        nothing, so "unclear" means only "no answer")."""
        try:
            return self._send("GET", path, params=params)
        except (_NothingSent, _Unclear) as failure:
            status = failure.status if isinstance(failure, _Unclear) else None
            raise GorgiasUnavailable(failure.reason, status=status) from None

    def _send(
        self,
        method: str,
        path: str,
        *,
        json: Mapping[str, Any] | None = None,
        params: Mapping[str, str | int] | None = None,
    ) -> Any:
        """One request within the budget, sent again after each 429; the decoded JSON of
        a 2xx. Raises :class:`GorgiasRefused`, :class:`GorgiasUnavailable`
        (``rate_limited``), :class:`_NothingSent` or :class:`_Unclear`."""
        waited = 0.0
        while True:
            self._wait_for_budget()
            response = self._exchange(method, path, json, params)
            if response.status_code != 429:
                break
            retry_after = _retry_after(response.headers.get("Retry-after"))
            self._budget.hold(self._clock(), retry_after)
            if waited + retry_after > self._max_rate_limit_wait_s:
                raise GorgiasUnavailable("rate_limited", status=429, retry_after_s=retry_after)
            waited += retry_after
            _log.info("Gorgias %s answered 429: waiting %.1fs", self.domain, retry_after)
        if response.status_code >= 500:
            raise _Unclear("server_error", response.status_code)
        if response.status_code >= 400:
            _refused(response)
        if response.status_code < 200 or response.status_code >= 300:
            raise _Unclear("bad_answer", response.status_code)
        try:
            return response.json()
        except ValueError:
            raise _Unclear("bad_answer", response.status_code) from None

    def _wait_for_budget(self) -> None:
        wait = self._budget.reserve(self._clock())
        if wait > 0:
            self._sleep(wait)

    def _exchange(
        self,
        method: str,
        path: str,
        json: Mapping[str, Any] | None,
        params: Mapping[str, str | int] | None,
    ) -> httpx.Response:
        try:
            return self._http.request(method, path, json=json, params=params)
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout):
            raise _NothingSent("connection") from None
        except httpx.TimeoutException:
            raise _Unclear("timeout") from None
        except httpx.TransportError:
            raise _Unclear("connection") from None


def _read(parse: Callable[[Any], Parsed], document: Any) -> Parsed:
    try:
        return parse(document)
    except BadAnswer:
        raise GorgiasUnavailable("bad_answer") from None


def _retry_after(header: str | None) -> float:
    try:
        seconds = float(header) if header is not None else _DEFAULT_RETRY_AFTER_S
    except ValueError:
        return _DEFAULT_RETRY_AFTER_S
    return max(0.0, seconds)


def _refused(response: httpx.Response) -> NoReturn:
    """Gorgias' ``{"error": {"msg": ...}}``; its message names fields, not their values."""
    message = response.reason_phrase or "refused"
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, Mapping) and isinstance(body.get("error"), Mapping):
        given = body["error"].get("msg")
        if isinstance(given, str) and given:
            message = given[:_MESSAGE_KEPT]
    raise GorgiasRefused(response.status_code, message)
