"""What the Gorgias sandbox holds, and each object in Gorgias' JSON shape.

An account is a helpdesk at ``{name}.gorgias.com``: its users (agents; those with an
API key can call the API), its customers, and the address customers write to. Tickets
and messages carry integer ids counted across the whole sandbox, as Gorgias' are
unique across accounts. Times are sandbox-clock seconds, written as Gorgias writes
them: ISO 8601 in UTC with microseconds and no offset.

Everything here is read and changed under :attr:`Store.lock`.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

JSON = dict[str, Any]

INTERNAL_NOTE = "internal-note"
# Where the counters start, so that ids of different kinds do not look alike.
_FIRST_IDS = {"user": 101, "customer": 5001, "ticket": 10001, "message": 200001}


def gorgias_time(seconds: float) -> str:
    """``2023-11-14T22:13:20.000000``: UTC, no offset, as Gorgias writes times."""
    moment = datetime.fromtimestamp(seconds, UTC).replace(tzinfo=None)
    return moment.isoformat(timespec="microseconds")


def _optional_time(seconds: float | None) -> str | None:
    return gorgias_time(seconds) if seconds is not None else None


def _names(name: str | None) -> tuple[str, str]:
    first, _, last = (name or "").partition(" ")
    return first, last


@dataclass(frozen=True)
class ApiUser:
    """An agent who may call the API: basic auth with this email and API key."""

    email: str
    api_key: str
    name: str | None = None


@dataclass
class User:
    """An agent of the account; ``api_key`` set when the user may call the API."""

    id: int
    email: str
    name: str
    api_key: str | None = None

    def to_json(self) -> JSON:
        first, last = _names(self.name)
        return {
            "id": self.id,
            "email": self.email,
            "name": self.name,
            "firstname": first,
            "lastname": last,
            "meta": None,
        }


@dataclass
class Customer:
    id: int
    email: str
    name: str | None

    def to_json(self) -> JSON:
        first, last = _names(self.name)
        return {
            "id": self.id,
            "email": self.email,
            "name": self.name,
            "firstname": first,
            "lastname": last,
            "meta": {},
        }


@dataclass
class Message:
    """A ticket message. ``sender`` and ``receiver`` are kept as Gorgias showed them when
    the message was created."""

    id: int
    ticket_id: int
    channel: str
    via: str
    from_agent: bool
    body_text: str
    body_html: str
    sender: JSON
    receiver: JSON | None
    source: JSON
    created: float
    subject: str | None = None
    external_id: str | None = None
    sent: float | None = None

    @property
    def public(self) -> bool:
        """Internal notes are the only messages the customer never sees."""
        return self.channel != INTERNAL_NOTE

    def to_json(self) -> JSON:
        return {
            "id": self.id,
            "uri": f"/api/tickets/{self.ticket_id}/messages/{self.id}/",
            "message_id": None,
            "ticket_id": self.ticket_id,
            "external_id": self.external_id,
            "public": self.public,
            "channel": self.channel,
            "via": self.via,
            "source": self.source,
            "sender": self.sender,
            "integration_id": None,
            "intents": [],
            "rule_id": None,
            "from_agent": self.from_agent,
            "receiver": self.receiver,
            "subject": self.subject,
            "body_text": self.body_text,
            "body_html": self.body_html,
            "stripped_text": self.body_text,
            "stripped_html": self.body_html,
            "stripped_signature": None,
            "headers": {},
            "attachments": [],
            "actions": None,
            "macros": [],
            "meta": None,
            "created_datetime": gorgias_time(self.created),
            "sent_datetime": _optional_time(self.sent),
            "failed_datetime": None,
            "deleted_datetime": None,
            "opened_datetime": None,
            "last_sending_error": None,
        }


@dataclass
class Ticket:
    id: int
    account: str
    customer_id: int
    subject: str | None
    channel: str
    via: str
    created: float
    updated: float
    status: str = "open"
    messages: list[Message] = field(default_factory=list)
    closed: float | None = None
    last_received: float | None = None

    def add(self, message: Message) -> None:
        """Append ``message`` and move the ticket's times (a customer's message reopens a
        closed ticket, as in Gorgias)."""
        self.messages.append(message)
        self.updated = message.created
        if not message.from_agent:
            self.last_received = message.created
            if self.status == "closed":
                self.status, self.closed = "open", None

    def to_json(self, customer: Customer) -> JSON:
        last = self.messages[-1] if self.messages else None
        return {
            "id": self.id,
            "uri": f"/api/tickets/{self.id}/",
            "external_id": None,
            "language": "en",
            "status": self.status,
            "priority": "normal",
            "channel": self.channel,
            "via": self.via,
            "from_agent": bool(self.messages and self.messages[0].from_agent),
            "customer": customer.to_json(),
            "assignee_user": None,
            "assignee_team": None,
            "subject": self.subject,
            "excerpt": (last.body_text[:100] if last is not None else ""),
            "integrations": [],
            "meta": None,
            "tags": [],
            "messages": [m.to_json() for m in self.messages],
            "messages_count": len(self.messages),
            "is_unread": True,
            "spam": False,
            "created_datetime": gorgias_time(self.created),
            "opened_datetime": None,
            "last_received_message_datetime": _optional_time(self.last_received),
            "last_message_datetime": _optional_time(last.created if last is not None else None),
            "updated_datetime": gorgias_time(self.updated),
            "closed_datetime": _optional_time(self.closed),
            "snooze_datetime": None,
            "trashed_datetime": None,
        }


@dataclass
class Account:
    """One helpdesk: ``domain`` is ``{name}.gorgias.com``; ``support_address`` is where
    customers write and replies come from."""

    domain: str
    support_address: str
    created: float
    users: dict[int, User] = field(default_factory=dict)
    customers: dict[int, Customer] = field(default_factory=dict)

    def user_by_email(self, email: str) -> User | None:
        wanted = email.strip().lower()
        return next((u for u in self.users.values() if u.email.lower() == wanted), None)

    def customer_by_email(self, email: str) -> Customer | None:
        wanted = email.strip().lower()
        return next((c for c in self.customers.values() if c.email.lower() == wanted), None)

    def api_json(self) -> JSON:
        """Gorgias' Account object (``GET /api/account``): ``domain`` is the bare name."""
        return {
            "domain": self.domain.removesuffix(".gorgias.com"),
            "created_datetime": gorgias_time(self.created),
            "deactivated_datetime": None,
            "settings": [],
            "status": {"status": "active"},
        }

    def to_json(self) -> JSON:
        """Control-endpoint form (API keys left out)."""
        return {
            "domain": self.domain,
            "support_address": self.support_address,
            "users": [
                u.to_json() | {"api_user": u.api_key is not None} for u in self.users.values()
            ],
        }


class Store:
    """Every account and ticket, and the id counters."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.accounts: dict[str, Account] = {}
        self.tickets: dict[int, Ticket] = {}
        self._ids = {kind: itertools.count(first) for kind, first in _FIRST_IDS.items()}

    def next_id(self, kind: str) -> int:
        """A new id of ``kind`` (``user``, ``customer``, ``ticket``, ``message``); ids are
        never given twice, not even after :meth:`clear`."""
        return next(self._ids[kind])

    def account(self, domain: str) -> Account:
        found = self.accounts.get(domain)
        if found is None:
            raise KeyError(f"no account {domain}")
        return found

    def ticket(self, ticket_id: int) -> Ticket:
        found = self.tickets.get(ticket_id)
        if found is None:
            raise KeyError(f"no ticket {ticket_id}")
        return found

    def customer_of(self, ticket: Ticket) -> Customer:
        return self.accounts[ticket.account].customers[ticket.customer_id]

    def ticket_json(self, ticket: Ticket) -> JSON:
        return ticket.to_json(self.customer_of(ticket))

    def clear(self) -> None:
        """Forget every account and ticket."""
        self.accounts.clear()
        self.tickets.clear()
