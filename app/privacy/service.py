"""A customer's data, handed over on request and erased on request, money facts kept.

Where a customer's personal data lives in Caseward, and what erasure does to it:

- ``customers``: email and name are set to nothing; the provider ids (Stripe, Shopify,
  the merchant's endpoint) stay: the books need them to match refunds to payments.
- ``conversations`` linked to the customer (verified as them, or the source of one of
  their cases): the step offered for their choice and their locale are cleared.
  The channel's ids, the identity level, how and when it was established, and
  ``storefront_customer_ref`` (the Shopify customer id, kept like the customer's own,
  which also keeps the chat closed to any other login) stay.
- ``conversation_participants`` of those conversations: email and name are set to
  nothing; refs (actor refs and channel ids) stay.
- ``conversation_messages`` of those conversations: every body becomes :data:`ERASED`
  (the customer's words, and our replies, which answer and may repeat them) and the
  composed sentence is cleared; the author, the channel's message id (so a helpdesk
  redelivering an old message still finds it kept), the action and status a message
  reported, and the times stay.
- ``helpdesk_commands`` of those conversations: the note to the agents (a drafted case's
  may repeat the customer's words) becomes :data:`ERASED`; the command, the agent's email,
  the action and the times stay.
- ``verification_codes`` hold only an HMAC of a random code, the order's id and times:
  kept.
- ``cases``: the customer's, and every case their conversations fed (one opened before
  the shopper proved who they were names no customer): subject and request text
  become :data:`ERASED`.
- ``case_drafts`` of those cases: the staff summary, an agent's drafted reply and the
  drafter's refused words become :data:`ERASED`, the claim the drafter stated (its reasons
  are the customer's) is removed; the drafter, the next step, token counts and Caseward's
  own failure reasons stay.
- ``provider_events``: raw webhook payloads that name the customer become
  ``{"erased": true}``. Gorgias calls hold only ticket and message ids (their job reads
  the ticket id): they name no customer.
- ``data_exports``: earlier exports of their data are deleted.
- ``proposals`` of those cases: the free-text reasons (a person's or the drafter's for
  proposing, a person's for rejecting, which may repeat the customer's words) become
  :data:`ERASED`. Their parameters stay, as the
  action's copy of them does: they are what was reviewed and sent under the action's
  idempotency key, and a resend with other parameters would be refused.
- Orders, actions and attempts hold no personal data (amounts, currencies, provider ids,
  statuses) and are kept.
- The audit chain holds none either (ids, amounts, codes, statuses; never a customer's
  words or contact details), so it is kept whole and still verifies.

The sequence of an erasure, in the caller's transaction: the stored payloads are
searched for the customers in one pass; every conversation, message, participant, case
and draft linked to any of them is blanked by set-based UPDATEs, never row by row; the
customers themselves are blanked and their exports deleted; one ``customer.erased``
event each records what was reached, in counts. A shop's erasure (``shop/redact``)
blanks every conversation, case, draft and payload of the shop, those of shoppers who
never said who they were included.

An export holds the customer's contact details and provider ids, their orders, their
conversations (channel, identity level and how it was established, every message with
its author and time) and their cases (actions, and replies drafted for a person to
send), as found through the same links.

So the books still balance after an erasure (every refund, its amount, approvals and
provider status), the chain still verifies (nothing in it changed), and nothing left
names the person. Each erasure and each export is itself audited, by ids and counts
only.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Select,
    Subquery,
    and_,
    delete,
    func,
    null,
    or_,
    select,
    union,
    update,
)
from sqlalchemy import case as when_then
from sqlalchemy.orm import Session

from app import audit
from app.actors import Actor
from app.cases.models import Case, Customer, Order
from app.cases.proposals import Proposal
from app.conversations.models import Conversation, HelpdeskCommand, Message, Participant
from app.crypto import SecretBox
from app.drafting.models import CaseDraftRecord
from app.execution.models import Action, ProviderEvent
from app.privacy.models import DataExport
from app.shops.models import Shop

ERASED = "(erased at the customer's request)"


def customers_named(
    session: Session, shop: Shop, *, shopify_ids: Sequence[str], emails: Sequence[str]
) -> list[Customer]:
    """The shop's customers a privacy request names, by Shopify id or email."""
    conditions = []
    if shopify_ids:
        conditions.append(Customer.shopify_customer_id.in_(shopify_ids))
    if emails:
        conditions.append(Customer.email.in_(emails))
    if not conditions:
        return []
    return list(
        session.scalars(select(Customer).where(Customer.shop_id == shop.id, or_(*conditions)))
    )


def erase_customers(
    session: Session,
    shop: Shop,
    customers: Sequence[Customer],
    *,
    request_ref: str,
    actor: Actor,
    now: datetime,
) -> int:
    """Erase what identifies each customer (see the list above); returns how many."""
    if not customers:
        return 0
    ids = [customer.id for customer in customers]
    whose = and_(Customer.shop_id == shop.id, Customer.id.in_(ids))
    erased_events = _erase_payloads(session, shop, customers)
    conversations, cases = _linked(shop.id, whose)
    _blank(
        session,
        conversations=Conversation.id.in_(select(conversations.c.conversation_id)),
        cases=Case.id.in_(select(cases.c.case_id)),
    )
    _forget(
        session,
        shop,
        ids,
        whose,
        conversations=conversations,
        cases=cases,
        provider_events=erased_events,
        request_ref=request_ref,
        actor=actor,
        now=now,
    )
    return len(ids)


def erase_shop(
    session: Session, shop: Shop, *, request_ref: str, actor: Actor, now: datetime
) -> int:
    """Everything that identifies any of the shop's customers, or any shopper who wrote
    to it: every conversation, case, draft and payload of the shop."""
    ids = list(session.scalars(select(Customer.id).where(Customer.shop_id == shop.id)))
    whose = Customer.shop_id == shop.id
    conversations, cases = _linked(shop.id, whose)
    _blank(session, conversations=Conversation.shop_id == shop.id, cases=Case.shop_id == shop.id)
    _forget(
        session,
        shop,
        ids,
        whose,
        conversations=conversations,
        cases=cases,
        provider_events={},
        request_ref=request_ref,
        actor=actor,
        now=now,
    )
    session.execute(
        update(ProviderEvent)
        .where(ProviderEvent.shop_id == shop.id)
        .values(payload={"erased": True})
    )
    return len(ids)


def _linked(shop_id: uuid.UUID, whose: ColumnElement[bool]) -> tuple[Subquery, Subquery]:
    """What belongs to the customers ``whose`` selects, as ``(customer_id,
    conversation_id)`` and ``(customer_id, case_id)`` rows: the conversations verified as
    them or that one of their cases came from, and their cases with every case those
    conversations fed (one opened before the shopper proved who they were has no
    customer)."""
    customer_ids = select(Customer.id).where(whose)
    conversations = union(
        select(
            Conversation.customer_id.label("customer_id"),
            Conversation.id.label("conversation_id"),
        ).where(Conversation.shop_id == shop_id, Conversation.customer_id.in_(customer_ids)),
        select(Case.customer_id, Case.conversation_id).where(
            Case.shop_id == shop_id,
            Case.customer_id.in_(customer_ids),
            Case.conversation_id.is_not(None),
        ),
    ).subquery()
    cases = union(
        select(Case.customer_id.label("customer_id"), Case.id.label("case_id")).where(
            Case.shop_id == shop_id, Case.customer_id.in_(customer_ids)
        ),
        select(conversations.c.customer_id, Case.id).join(
            Case, Case.conversation_id == conversations.c.conversation_id
        ),
    ).subquery()
    return conversations, cases


def _blank(
    session: Session, *, conversations: ColumnElement[bool], cases: ColumnElement[bool]
) -> None:
    """Blank the words and contact details held with the conversations and cases the
    conditions select (see the list above); ids, statuses and times stay."""
    conversation_ids = select(Conversation.id).where(conversations)
    case_ids = select(Case.id).where(cases)
    # ``updated_at`` is set to itself: an erasure is no activity in the conversation or
    # the case, and their times stay.
    session.execute(
        update(Conversation)
        .where(conversations)
        .values(pending_step=null(), locale=None, updated_at=Conversation.updated_at)
    )
    session.execute(
        update(Participant)
        .where(Participant.conversation_id.in_(conversation_ids))
        .values(email=None, name=None)
    )
    session.execute(
        update(Message)
        .where(Message.conversation_id.in_(conversation_ids))
        # Owed no draft either: nothing is left to answer.
        .values(body=ERASED, sentence=null(), draft_owed_since=None)
    )
    session.execute(
        update(HelpdeskCommand)
        .where(
            HelpdeskCommand.conversation_id.in_(conversation_ids),
            HelpdeskCommand.note.is_not(None),
        )
        .values(note=ERASED)
    )
    session.execute(
        update(Case)
        .where(cases)
        .values(subject=ERASED, request_text=ERASED, updated_at=Case.updated_at)
    )
    # Either reason may be empty: each is blanked only where it holds words.
    session.execute(
        update(Proposal)
        .where(
            Proposal.case_id.in_(case_ids),
            or_(Proposal.reason.is_not(None), Proposal.rejection_reason.is_not(None)),
        )
        .values(
            reason=when_then((Proposal.reason.is_not(None), ERASED)),
            rejection_reason=when_then((Proposal.rejection_reason.is_not(None), ERASED)),
            updated_at=Proposal.updated_at,
        )
    )
    # An agent's draft has no summary and the drafter's no reply: those stay empty.
    session.execute(
        update(CaseDraftRecord)
        .where(CaseDraftRecord.case_id.in_(case_ids), CaseDraftRecord.summary != "")
        .values(summary=ERASED)
    )
    session.execute(
        update(CaseDraftRecord)
        .where(CaseDraftRecord.case_id.in_(case_ids), CaseDraftRecord.reply.is_not(None))
        .values(reply=ERASED)
    )
    session.execute(
        update(CaseDraftRecord)
        .where(
            CaseDraftRecord.case_id.in_(case_ids),
            or_(CaseDraftRecord.claim.is_not(None), CaseDraftRecord.refused_text.is_not(None)),
        )
        .values(
            claim=null(),
            refused_text=when_then((CaseDraftRecord.refused_text.is_not(None), ERASED)),
        )
    )


def _forget(
    session: Session,
    shop: Shop,
    ids: Sequence[uuid.UUID],
    whose: ColumnElement[bool],
    *,
    conversations: Subquery,
    cases: Subquery,
    provider_events: Mapping[uuid.UUID, int],
    request_ref: str,
    actor: Actor,
    now: datetime,
) -> None:
    """Blank the customers themselves, delete their exports, and audit each erasure
    with what it reached, in counts."""
    conversation_counts = _per_customer(
        session,
        select(conversations.c.customer_id, func.count()).group_by(conversations.c.customer_id),
    )
    message_counts = _per_customer(
        session,
        select(conversations.c.customer_id, func.count())
        .select_from(conversations)
        .join(Message, Message.conversation_id == conversations.c.conversation_id)
        .group_by(conversations.c.customer_id),
    )
    case_counts = _per_customer(
        session, select(cases.c.customer_id, func.count()).group_by(cases.c.customer_id)
    )
    session.execute(update(Customer).where(whose).values(email=None, name=None))
    _delete_exports(session, shop, ids)
    for customer_id in ids:
        audit.record(
            session,
            shop_id=shop.id,
            kind="customer.erased",
            actor=actor,
            data={
                "customer_id": str(customer_id),
                "request": request_ref,
                "cases": case_counts.get(customer_id, 0),
                "conversations": conversation_counts.get(customer_id, 0),
                "messages": message_counts.get(customer_id, 0),
                "provider_events": provider_events.get(customer_id, 0),
            },
            now=now,
        )
    session.flush()


def _per_customer(session: Session, counts: Select[uuid.UUID | None, int]) -> dict[uuid.UUID, int]:
    return {customer_id: count for customer_id, count in session.execute(counts) if customer_id}


def export_customers(
    session: Session,
    shop: Shop,
    customers: Sequence[Customer],
    *,
    request_ref: str,
    box: SecretBox,
    actor: Actor,
    now: datetime,
) -> DataExport:
    """Everything Caseward holds about the customers, for the shop owner to hand over."""
    content = {
        "shop": shop.domain,
        "request": request_ref,
        "created_at": now.isoformat(),
        "customers": [_customer_record(session, shop, customer) for customer in customers],
    }
    export = DataExport(
        id=uuid.uuid4(),
        shop_id=shop.id,
        request_ref=request_ref,
        customer_ids=[str(customer.id) for customer in customers],
        encrypted_content=box.encrypt(json.dumps(content, ensure_ascii=False)),
        created_at=now,
    )
    session.add(export)
    audit.record(
        session,
        shop_id=shop.id,
        kind="customer.data_exported",
        actor=actor,
        data={
            "export_id": str(export.id),
            "request": request_ref,
            "customer_ids": export.customer_ids,
        },
        now=now,
    )
    session.flush()
    return export


def _customer_record(session: Session, shop: Shop, customer: Customer) -> dict[str, Any]:
    linked_conversations, linked_cases = _linked(shop.id, Customer.id == customer.id)
    conversations = session.scalars(
        select(Conversation)
        .where(Conversation.id.in_(select(linked_conversations.c.conversation_id)))
        .order_by(Conversation.created_at, Conversation.id)
    )
    cases = session.scalars(
        select(Case)
        .where(Case.id.in_(select(linked_cases.c.case_id)))
        .order_by(Case.created_at, Case.id)
    )
    orders = session.scalars(select(Order).where(Order.customer_id == customer.id))
    return {
        "email": customer.email,
        "name": customer.name,
        "stripe_customer_id": customer.stripe_customer_id,
        "shopify_customer_id": customer.shopify_customer_id,
        "merchant_customer_id": customer.merchant_customer_id,
        "orders": [
            {
                "name": o.name,
                "currency": o.currency,
                "total": o.total,
                "created_at": _iso(o.created_at),
            }
            for o in orders
        ],
        "conversations": [
            _conversation_record(session, conversation) for conversation in conversations
        ],
        "cases": [
            {
                "subject": case.subject,
                "request_text": case.request_text,
                "status": case.status,
                "created_at": _iso(case.created_at),
                "actions": [
                    {
                        "kind": a.kind,
                        "amount": a.amount,
                        "currency": a.currency,
                        "status": a.status,
                        "provider_ref": a.provider_ref,
                    }
                    for a in session.scalars(select(Action).where(Action.case_id == case.id))
                ],
                "drafted_replies": [
                    {"drafter": d.drafter, "reply": d.reply, "created_at": _iso(d.created_at)}
                    for d in session.scalars(
                        select(CaseDraftRecord)
                        .where(
                            CaseDraftRecord.case_id == case.id,
                            CaseDraftRecord.reply.is_not(None),
                        )
                        .order_by(CaseDraftRecord.created_at)
                    )
                ],
            }
            for case in cases
        ],
    }


def _conversation_record(session: Session, conversation: Conversation) -> dict[str, Any]:
    messages = session.scalars(
        select(Message)
        .where(Message.conversation_id == conversation.id)
        .order_by(Message.created_at, Message.id)
    )
    return {
        "channel": conversation.channel,
        "created_at": _iso(conversation.created_at),
        "identity": {
            "level": conversation.identity_level,
            "method": conversation.identity_method,
            "established_at": _iso(conversation.identity_at),
        },
        "messages": [
            {"author": m.author, "body": m.body, "created_at": _iso(m.created_at)} for m in messages
        ],
    }


def _erase_payloads(
    session: Session, shop: Shop, customers: Sequence[Customer]
) -> dict[uuid.UUID, int]:
    """Blank, in one pass, the shop's stored webhook payloads that name any of the
    customers (by Shopify id under a ``customer`` object, or by email anywhere); returns
    how many named each customer."""
    wanted = [
        (
            customer.id,
            (customer.shopify_customer_id or "").rsplit("/", 1)[-1],
            (customer.email or "").lower(),
        )
        for customer in customers
    ]
    erased: dict[uuid.UUID, int] = {}
    if not wanted:
        return erased
    for event in session.scalars(select(ProviderEvent).where(ProviderEvent.shop_id == shop.id)):
        named = [
            cid for cid, shopify_id, email in wanted if _names(event.payload, shopify_id, email)
        ]
        if named:
            event.payload = {"erased": True}
            for cid in named:
                erased[cid] = erased.get(cid, 0) + 1
    return erased


def _names(value: Any, shopify_id: str, email: str) -> bool:
    if isinstance(value, dict):
        customer = value.get("customer")
        if (
            shopify_id
            and isinstance(customer, dict)
            and str(customer.get("id", "")).rsplit("/", 1)[-1] == shopify_id
        ):
            return True
        return any(_names(item, shopify_id, email) for item in value.values())
    if isinstance(value, list):
        return any(_names(item, shopify_id, email) for item in value)
    return bool(email) and isinstance(value, str) and value.lower() == email


def _delete_exports(session: Session, shop: Shop, ids: Sequence[uuid.UUID]) -> None:
    erased = {str(customer_id) for customer_id in ids}
    naming = [
        export_id
        for export_id, customer_ids in session.execute(
            select(DataExport.id, DataExport.customer_ids).where(DataExport.shop_id == shop.id)
        )
        if erased.intersection(customer_ids)
    ]
    if naming:
        session.execute(delete(DataExport).where(DataExport.id.in_(naming)))


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def answer_shopify_request(
    session: Session,
    shop: Shop,
    topic: str,
    payload: dict[str, Any],
    *,
    box: SecretBox,
    actor: Actor,
    now: datetime,
) -> str:
    """Do what a privacy topic asks; returns what was done, in words for the log."""
    if topic == "shop/redact":
        erased = erase_shop(
            session, shop, request_ref=f"shop/redact:{shop.domain}", actor=actor, now=now
        )
        return f"erased {erased} customers and every stored payload"
    person = _object(payload, "customer")
    shopify_id = str(person.get("id") or "")
    email = str(person.get("email") or "")
    customers = customers_named(
        session,
        shop,
        shopify_ids=[f"gid://shopify/Customer/{shopify_id}", shopify_id] if shopify_id else [],
        emails=[email] if email else [],
    )
    if topic == "customers/redact":
        erased = erase_customers(
            session,
            shop,
            customers,
            request_ref=f"customers/redact:{shopify_id}",
            actor=actor,
            now=now,
        )
        return f"erased {erased} customers"
    request = _object(payload, "data_request")
    export = export_customers(
        session,
        shop,
        customers,
        request_ref=f"customers/data_request:{request.get('id', '')}",
        box=box,
        actor=actor,
        now=now,
    )
    return f"exported {len(export.customer_ids)} customers as {export.id}"


def _object(payload: dict[str, Any], name: str) -> dict[str, Any]:
    value = payload.get(name)
    return value if isinstance(value, dict) else {}
