"""The ticket endpoints: what each request may say, what it creates, and Gorgias' errors.

``POST /api/tickets/{id}/messages`` and the messages of ``POST /api/tickets`` follow
Gorgias' rules for messages created through the API:

* ``channel`` and ``from_agent`` are required, and a body (``body_text`` or
  ``body_html``); fields Gorgias does not know are refused;
* a customer's message (``from_agent`` false): ``sender`` names a customer (by ``id``,
  or by ``email``, a new customer if nobody has it) and ``receiver`` is not set;
* an agent's public message: ``sender`` names a user of the account and ``receiver`` a
  customer; Gorgias sends it at once here (``sent_datetime`` is its creation time);
* an internal note (channel ``internal-note``): ``sender`` names a user, no receiver
  needed, and it is not public;
* ``external_id`` (up to 255 characters) is kept as given and never checked for
  uniqueness: Gorgias leaves it to the caller.

A request is checked whole before anything is stored, so a refused one creates no
customer either. Refusals are ``{"error": {"msg": ..., "data": {field: [problems]}}}``.
Lists of messages (``GET /api/messages``, filtered by ``ticket_id``, and a ticket's
``GET /api/tickets/{id}/messages``) are pages of ``{"object": "list", "uri", "data",
"meta": {"prev_cursor", "next_cursor"}}``, walked with an opaque ``cursor`` and
``limit`` (1 to 100, default 30), ordered by ``order_by`` (``created_datetime:desc`` by
default, or ``:asc``).
"""

from __future__ import annotations

import base64
import binascii
import html
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from integrations.sandbox_kit import Response

from .state import INTERNAL_NOTE, Account, Customer, Message, Store, Ticket, User

JSON = dict[str, Any]

CHANNELS = (
    "aircall",
    "api",
    "chat",
    "contact_form",
    "email",
    "facebook",
    "facebook-mention",
    "facebook-messenger",
    "help-center",
    INTERNAL_NOTE,
    "instagram-comment",
    "instagram-direct-message",
    "phone",
    "sms",
    "twitter",
    "whatsapp",
)
VIAS = (
    "aircall",
    "api",
    "chat",
    "contact_form",
    "email",
    "facebook",
    "form",
    "gorgias_chat",
    "help-center",
    "helpdesk",
    "instagram",
    "phone",
    "rule",
    "sms",
    "twitter",
    "whatsapp",
)
MESSAGE_FIELDS = frozenset(
    {
        "actions",
        "attachments",
        "body_html",
        "body_text",
        "channel",
        "created_datetime",
        "external_id",
        "failed_datetime",
        "from_agent",
        "headers",
        "integration_id",
        "macros",
        "message_id",
        "meta",
        "receiver",
        "sender",
        "sent_datetime",
        "source",
        "subject",
        "via",
    }
)
TICKET_FIELDS = frozenset(
    {
        "assignee_team",
        "assignee_user",
        "channel",
        "customer",
        "external_id",
        "from_agent",
        "language",
        "messages",
        "meta",
        "priority",
        "spam",
        "status",
        "subject",
        "tags",
        "via",
    }
)
TICKET_STATUSES = ("open", "closed")
EXTERNAL_ID_MAX = 255
PAGE_DEFAULT, PAGE_MAX = 30, 100
ORDERS = ("created_datetime:asc", "created_datetime:desc")
_TAG = re.compile(r"<[^>]+>")
_REQUIRED = "Missing data for required field."


class ApiError(Exception):
    """A request Gorgias refuses: its status, message and per-field problems."""

    def __init__(self, status: int, msg: str, data: Mapping[str, list[str]] | None = None) -> None:
        super().__init__(msg)
        self.status = status
        self.msg = msg
        self.data = dict(data or {})

    def response(self, headers: Mapping[str, str] | None = None) -> Response:
        error: JSON = {"msg": self.msg}
        if self.data:
            error["data"] = self.data
        return json_response(self.status, {"error": error}, headers)


def json_response(status: int, body: Any, headers: Mapping[str, str] | None = None) -> Response:
    """A JSON answer as Gorgias sends it."""
    return Response(
        status,
        json.dumps(body).encode("utf-8"),
        {"Content-Type": "application/json", **(headers or {})},
    )


def invalid(problems: Mapping[str, list[str]]) -> ApiError:
    """A 400 whose message names each field and its first problem."""
    named = "; ".join(f"{name}: {issues[0]}" for name, issues in sorted(problems.items()))
    return ApiError(400, f"Invalid request: {named}", problems)


# -- parties ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Party:
    """``sender``/``receiver`` as the request named them."""

    id: int | None
    email: str | None
    name: str | None


def _party(value: object, field: str, problems: dict[str, list[str]]) -> _Party | None:
    if value is None:
        return None
    if isinstance(value, Mapping):
        given_id, email, name = value.get("id"), value.get("email"), value.get("name")
        id_ok = isinstance(given_id, int) and not isinstance(given_id, bool)
        if id_ok or (isinstance(email, str) and "@" in email):
            return _Party(
                given_id if id_ok else None,
                email.strip() if isinstance(email, str) else None,
                name if isinstance(name, str) else None,
            )
    problems[field] = ["Must name a user or customer by id or email."]
    return None


def _user(account: Account, party: _Party) -> User | None:
    if party.id is not None:
        return account.users.get(party.id)
    return account.user_by_email(party.email or "")


def _customer_exists(account: Account, party: _Party) -> bool:
    return party.email is not None or party.id in account.customers


def resolve_customer(store: Store, account: Account, party: _Party) -> Customer:
    """The customer ``party`` names, made when only an unknown email names it."""
    if party.id is not None and party.id in account.customers:
        return account.customers[party.id]
    email = party.email or ""
    found = account.customer_by_email(email)
    if found is not None:
        return found
    customer = Customer(store.next_id("customer"), email, party.name)
    account.customers[customer.id] = customer
    return customer


# -- messages --------------------------------------------------------------------------------


@dataclass(frozen=True)
class MessageDraft:
    """A message request found valid, not yet stored."""

    channel: str
    via: str
    from_agent: bool
    body_text: str
    body_html: str
    sender: _Party
    user: User | None
    receiver: _Party | None
    source: JSON | None
    subject: str | None
    external_id: str | None


def check_message(account: Account, body: object, where: str = "") -> MessageDraft:
    """A message request checked whole against Gorgias' rules (``where`` prefixes field
    names, for a ticket's ``messages.0.``); raises :class:`ApiError`."""
    if not isinstance(body, Mapping):
        raise invalid({where.rstrip(".") or "body": ["Must be a JSON object."]})
    problems: dict[str, list[str]] = {}
    for name in sorted(set(body) - MESSAGE_FIELDS):
        problems[name] = ["Unknown field."]
    channel = body.get("channel")
    if channel not in CHANNELS:
        problems["channel"] = [_REQUIRED if channel is None else "Not a valid channel."]
    via = body.get("via", "api")
    if via not in VIAS:
        problems["via"] = ["Not a valid via."]
    from_agent = body.get("from_agent")
    if not isinstance(from_agent, bool):
        problems["from_agent"] = [_REQUIRED if from_agent is None else "Not a valid boolean."]
    body_text, body_html = body.get("body_text"), body.get("body_html")
    if not (isinstance(body_text, str) and body_text) and not (
        isinstance(body_html, str) and body_html
    ):
        problems["body_text"] = ["A message needs body_text or body_html."]
    external_id = body.get("external_id")
    if external_id is not None and not (
        isinstance(external_id, str) and len(external_id) <= EXTERNAL_ID_MAX
    ):
        problems["external_id"] = [f"Must be a string of at most {EXTERNAL_ID_MAX} characters."]
    subject = body.get("subject")
    if subject is not None and not isinstance(subject, str):
        problems["subject"] = ["Not a valid string."]
    source = body.get("source")
    if source is not None and not isinstance(source, Mapping):
        problems["source"] = ["Must be an object."]
    sender = _party(body.get("sender"), "sender", problems)
    receiver = _party(body.get("receiver"), "receiver", problems)
    user = _check_parties(account, channel, from_agent, sender, receiver, problems)
    if problems:
        raise invalid({f"{where}{name}": issues for name, issues in problems.items()})
    assert sender is not None and isinstance(from_agent, bool)
    text = body_text if isinstance(body_text, str) and body_text else None
    markup = body_html if isinstance(body_html, str) and body_html else None
    return MessageDraft(
        channel=str(channel),
        via=str(via),
        from_agent=from_agent,
        body_text=text if text is not None else html.unescape(_TAG.sub("", markup or "")),
        body_html=markup if markup is not None else _html(text or ""),
        sender=sender,
        user=user,
        receiver=receiver,
        source=dict(source) if isinstance(source, Mapping) else None,
        subject=subject if isinstance(subject, str) else None,
        external_id=external_id if isinstance(external_id, str) else None,
    )


def _check_parties(
    account: Account,
    channel: object,
    from_agent: object,
    sender: _Party | None,
    receiver: _Party | None,
    problems: dict[str, list[str]],
) -> User | None:
    """The user who sends an agent's message; problems with sender and receiver noted."""
    if "sender" in problems or not isinstance(from_agent, bool):
        return None
    if sender is None:
        problems["sender"] = [_REQUIRED]
        return None
    if not from_agent:
        if receiver is not None:
            problems["receiver"] = ["Must not be set on a message from a customer."]
        if not _customer_exists(account, sender):
            problems["sender"] = ["No customer has this id."]
        return None
    user = _user(account, sender)
    if user is None:
        problems["sender"] = ["No user of this account matches."]
    if channel != INTERNAL_NOTE and "receiver" not in problems:
        if receiver is None:
            problems["receiver"] = [_REQUIRED]
        elif not _customer_exists(account, receiver):
            problems["receiver"] = ["No customer has this id."]
    return user


def store_message(
    store: Store, account: Account, ticket: Ticket, draft: MessageDraft, now: float
) -> Message:
    """Create the message ``draft`` describes on ``ticket`` (its customer made if new)."""
    if draft.from_agent:
        assert draft.user is not None
        sender = draft.user.to_json()
        receiver = (
            resolve_customer(store, account, draft.receiver).to_json()
            if draft.receiver is not None
            else None
        )
        source = {
            "type": draft.channel,
            "from": {"name": draft.user.name, "address": draft.user.email},
            "to": [{"name": receiver["name"], "address": receiver["email"]}] if receiver else [],
        }
    else:
        customer = resolve_customer(store, account, draft.sender)
        sender, receiver = customer.to_json(), None
        source = {
            "type": draft.channel,
            "from": {"name": customer.name, "address": customer.email},
            "to": [{"name": None, "address": account.support_address}],
        }
    message = Message(
        id=store.next_id("message"),
        ticket_id=ticket.id,
        channel=draft.channel,
        via=draft.via,
        from_agent=draft.from_agent,
        body_text=draft.body_text,
        body_html=draft.body_html,
        sender=sender,
        receiver=receiver,
        source=draft.source if draft.source is not None else source,
        created=now,
        subject=draft.subject if draft.subject is not None else ticket.subject,
        external_id=draft.external_id,
        sent=now,
    )
    ticket.add(message)
    return message


def _html(text: str) -> str:
    return "<div>" + html.escape(text).replace("\n", "<br>") + "</div>"


# -- tickets ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class TicketDraft:
    customer: _Party
    subject: str | None
    status: str
    channel: str
    via: str
    messages: tuple[MessageDraft, ...]


def check_ticket(account: Account, body: object) -> TicketDraft:
    """A ``POST /api/tickets`` request checked whole; raises :class:`ApiError`."""
    if not isinstance(body, Mapping):
        raise invalid({"body": ["Must be a JSON object."]})
    problems: dict[str, list[str]] = {}
    for name in sorted(set(body) - TICKET_FIELDS):
        problems[name] = ["Unknown field."]
    listed = body.get("messages")
    if not isinstance(listed, list) or not listed:
        problems["messages"] = ["A ticket needs at least one message."]
    status = body.get("status", "open")
    if status not in TICKET_STATUSES:
        problems["status"] = ["Not a valid status."]
    subject = body.get("subject")
    if subject is not None and not isinstance(subject, str):
        problems["subject"] = ["Not a valid string."]
    customer = _party(body.get("customer"), "customer", problems)
    if problems:
        raise invalid(problems)
    assert isinstance(listed, list)
    drafts = tuple(check_message(account, m, f"messages.{n}.") for n, m in enumerate(listed))
    first = drafts[0]
    customer = customer or (first.receiver if first.from_agent else first.sender)
    if customer is None or not _customer_exists(account, customer):
        raise invalid({"customer": ["A ticket needs a customer."]})
    channel, via = body.get("channel", first.channel), body.get("via", first.via)
    if channel not in CHANNELS or via not in VIAS:
        raise invalid({"channel": ["Not a valid channel or via."]})
    return TicketDraft(
        customer=customer,
        subject=subject if isinstance(subject, str) else None,
        status=str(status),
        channel=str(channel),
        via=str(via),
        messages=drafts,
    )


def store_ticket(store: Store, account: Account, draft: TicketDraft, now: float) -> Ticket:
    """Create the ticket ``draft`` describes, with its messages."""
    customer = resolve_customer(store, account, draft.customer)
    ticket = Ticket(
        id=store.next_id("ticket"),
        account=account.domain,
        customer_id=customer.id,
        subject=draft.subject,
        channel=draft.channel,
        via=draft.via,
        created=now,
        updated=now,
        status=draft.status,
        closed=now if draft.status == "closed" else None,
    )
    store.tickets[ticket.id] = ticket
    for message in draft.messages:
        store_message(store, account, ticket, message, now)
    return ticket


# -- lists -----------------------------------------------------------------------------------


def message_page(messages: Sequence[Message], uri: str, query: Mapping[str, Sequence[str]]) -> JSON:
    """One page of ``messages`` (oldest first) for a list at ``uri``."""
    limit_text = (query.get("limit") or [str(PAGE_DEFAULT)])[0]
    order = (query.get("order_by") or [ORDERS[1]])[0]
    problems: dict[str, list[str]] = {}
    limit = int(limit_text) if limit_text.isdigit() else 0
    if not 1 <= limit <= PAGE_MAX:
        problems["limit"] = [f"Must be between 1 and {PAGE_MAX}."]
    if order not in ORDERS:
        problems["order_by"] = [f"Must be one of {', '.join(ORDERS)}."]
    offset = _offset((query.get("cursor") or [""])[0], problems)
    if problems:
        raise invalid(problems)
    ordered = list(reversed(messages)) if order.endswith(":desc") else list(messages)
    following = offset + limit
    return {
        "object": "list",
        "uri": uri,
        "data": [m.to_json() for m in ordered[offset:following]],
        "meta": {
            "prev_cursor": _cursor(max(0, offset - limit)) if offset > 0 else None,
            "next_cursor": _cursor(following) if following < len(ordered) else None,
        },
    }


def account_messages(store: Store, account: Account, query: Mapping[str, Sequence[str]]) -> JSON:
    """One page of ``GET /api/messages``: the account's messages, of one ticket when
    ``ticket_id`` says so."""
    wanted = (query.get("ticket_id") or [""])[0]
    if wanted and not wanted.isdigit():
        raise invalid({"ticket_id": ["Not a valid integer."]})
    tickets = [
        t
        for t in store.tickets.values()
        if t.account == account.domain and (not wanted or t.id == int(wanted))
    ]
    messages = sorted((m for t in tickets for m in t.messages), key=lambda m: (m.created, m.id))
    return message_page(messages, "/api/messages", query)


def _cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"offset:{offset}".encode()).decode()


def _offset(cursor: str, problems: dict[str, list[str]]) -> int:
    if not cursor:
        return 0
    try:
        label, _, number = base64.urlsafe_b64decode(cursor.encode()).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        label, number = "", ""
    if label != "offset" or not number.isdigit():
        problems["cursor"] = ["Not a valid cursor."]
        return 0
    return int(number)
