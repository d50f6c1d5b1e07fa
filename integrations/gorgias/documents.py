"""Gorgias' tickets and messages as Caseward reads them, and the messages it posts.

Gorgias answers with large objects (a ticket carries its customer, tags, assignee,
every message with its source, headers and attachments); Caseward needs a few fields of
each. They are read here, strictly where Caseward relies on them (ids are integers, a
message says whether an agent sent it) and leniently elsewhere (a missing name is
``None``). An answer that breaks the strict part raises :class:`BadAnswer`, which the
client reports as ``bad_answer``. Times are aware UTC datetimes; Gorgias writes them
without an offset, in UTC.

What Caseward posts is built here too (:func:`reply_payload`, :func:`note_payload`), in
the shape Gorgias documents for outgoing messages and internal notes created through
the API.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

JSON = dict[str, Any]

ReplyChannel = Literal["email", "chat"]
INTERNAL_NOTE = "internal-note"
# Gorgias keeps at most this many characters of a message's ``external_id``.
EXTERNAL_ID_MAX = 255


class BadAnswer(ValueError):
    """An answer from Gorgias that lacks what Caseward relies on."""


@dataclass(frozen=True)
class AccountInfo:
    """The helpdesk the credentials open: ``domain`` is its bare name (``linen-and-loom``)."""

    domain: str
    status: str | None


@dataclass(frozen=True)
class Customer:
    id: int
    email: str | None
    name: str | None


@dataclass(frozen=True)
class TicketMessage:
    """One message of a ticket: from the customer (``from_agent`` false), a reply from
    the shop, or an internal note (``public`` false)."""

    id: int
    body_text: str
    from_agent: bool
    public: bool
    channel: str
    via: str | None
    sender_email: str | None
    external_id: str | None
    created_datetime: datetime


@dataclass(frozen=True)
class Ticket:
    id: int
    subject: str | None
    status: str
    channel: str | None
    customer: Customer | None
    messages: tuple[TicketMessage, ...]
    updated_datetime: datetime | None


@dataclass(frozen=True)
class PostedMessage:
    """A message Caseward posted. ``found_by_lookup``: the post's answer was lost and the
    message was found on the ticket by its ``external_id`` instead."""

    id: int
    ticket_id: int
    external_id: str | None
    channel: str
    public: bool
    created_datetime: datetime
    found_by_lookup: bool = False


def account_from(document: object) -> AccountInfo:
    """The account from ``GET /api/account``."""
    data = _object(document, "account")
    status = data.get("status")
    return AccountInfo(
        domain=_text(data, "domain"),
        status=_optional_text(status, "status") if isinstance(status, Mapping) else None,
    )


def ticket_from(document: object) -> Ticket:
    """A ticket from ``GET /api/tickets/{id}``."""
    data = _object(document, "ticket")
    customer = data.get("customer")
    return Ticket(
        id=_integer(data, "id"),
        subject=_optional_text(data, "subject"),
        status=_text(data, "status"),
        channel=_optional_text(data, "channel"),
        customer=_customer(customer) if customer is not None else None,
        messages=tuple(message_from(m) for m in _list(data, "messages")),
        updated_datetime=_optional_time(data, "updated_datetime"),
    )


def message_from(document: object) -> TicketMessage:
    """A message from a ticket or a list of a ticket's messages."""
    data = _object(document, "message")
    sender = data.get("sender")
    return TicketMessage(
        id=_integer(data, "id"),
        body_text=_optional_text(data, "body_text") or "",
        from_agent=_boolean(data, "from_agent"),
        public=_boolean(data, "public"),
        channel=_text(data, "channel"),
        via=_optional_text(data, "via"),
        sender_email=_optional_text(sender, "email") if isinstance(sender, Mapping) else None,
        external_id=_optional_text(data, "external_id"),
        created_datetime=_time(data, "created_datetime"),
    )


def posted_from(document: object, *, found_by_lookup: bool = False) -> PostedMessage:
    """What ``POST /api/tickets/{id}/messages`` created (or the lookup found)."""
    data = _object(document, "message")
    return PostedMessage(
        id=_integer(data, "id"),
        ticket_id=_integer(data, "ticket_id"),
        external_id=_optional_text(data, "external_id"),
        channel=_text(data, "channel"),
        public=_boolean(data, "public"),
        created_datetime=_time(data, "created_datetime"),
        found_by_lookup=found_by_lookup,
    )


def reply_payload(
    *,
    body_text: str,
    our_id: str,
    sender_email: str,
    receiver_email: str,
    channel: ReplyChannel,
) -> JSON:
    """An outgoing public message from the shop's agent to the customer, sent by Gorgias."""
    return {
        "channel": channel,
        "via": "api",
        "from_agent": True,
        "body_text": body_text,
        "body_html": _html(body_text),
        "external_id": _checked_id(our_id),
        "sender": {"email": sender_email},
        "receiver": {"email": receiver_email},
        "source": {
            "type": channel,
            "from": {"address": sender_email},
            "to": [{"address": receiver_email}],
        },
    }


def note_payload(*, body_text: str, our_id: str, sender_email: str) -> JSON:
    """An internal note by the API user: agents see it, the customer never does."""
    return {
        "channel": INTERNAL_NOTE,
        "via": "api",
        "from_agent": True,
        "body_text": body_text,
        "body_html": _html(body_text),
        "external_id": _checked_id(our_id),
        "sender": {"email": sender_email},
        "source": {"type": INTERNAL_NOTE, "from": {"address": sender_email}, "to": []},
    }


def parse_time(value: str) -> datetime:
    """Gorgias' ISO 8601 time, read as UTC when it carries no offset."""
    moment = datetime.fromisoformat(value)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _checked_id(our_id: str) -> str:
    if not our_id or len(our_id) > EXTERNAL_ID_MAX:
        raise ValueError(f"our_id must be 1 to {EXTERNAL_ID_MAX} characters")
    return our_id


def _html(text: str) -> str:
    return "<div>" + html.escape(text).replace("\n", "<br>") + "</div>"


def _customer(document: object) -> Customer:
    data = _object(document, "customer")
    return Customer(
        id=_integer(data, "id"),
        email=_optional_text(data, "email"),
        name=_optional_text(data, "name"),
    )


def _object(document: object, what: str) -> Mapping[str, Any]:
    if not isinstance(document, Mapping):
        raise BadAnswer(f"a {what} is not a JSON object")
    return document


def _integer(data: Mapping[str, Any], name: str) -> int:
    value = data.get(name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadAnswer(f"{name} is not an integer")
    return value


def _boolean(data: Mapping[str, Any], name: str) -> bool:
    value = data.get(name)
    if not isinstance(value, bool):
        raise BadAnswer(f"{name} is not a boolean")
    return value


def _text(data: Mapping[str, Any], name: str) -> str:
    value = data.get(name)
    if not isinstance(value, str):
        raise BadAnswer(f"{name} is not a string")
    return value


def _optional_text(data: Mapping[str, Any], name: str) -> str | None:
    value = data.get(name)
    return value if isinstance(value, str) else None


def _list(data: Mapping[str, Any], name: str) -> list[Any]:
    value = data.get(name)
    if value is None:
        return []
    if not isinstance(value, list):
        raise BadAnswer(f"{name} is not a list")
    return value


def _time(data: Mapping[str, Any], name: str) -> datetime:
    moment = _optional_time(data, name)
    if moment is None:
        raise BadAnswer(f"{name} is missing")
    return moment


def _optional_time(data: Mapping[str, Any], name: str) -> datetime | None:
    value = data.get(name)
    if value is None:
        return None
    try:
        return parse_time(str(value))
    except ValueError:
        raise BadAnswer(f"{name} is not an ISO 8601 time") from None
