"""Establishing who the shopper in a conversation is, and recording how.

Levels only rise, and each rise is audited with the method (never the email or the
code). The ways in, strongest first:

- **logged in** (strong): Shopify's signed app proxy named ``logged_in_customer_id``
  (:func:`establish_logged_in`); the signature is checked before this is reached.
- **email code** (strong): the shopper names an order and its email; if they match our
  copy of the order, a six-digit code goes to that email (:func:`send_email_code`). The
  answer is the same whether or not they matched, so nobody learns which orders exist.
  The code is kept only as an HMAC, expires after :data:`CODE_LIFETIME`, is spent on
  first use, allows :data:`MAX_ATTEMPTS` guesses and is compared in constant time
  (:func:`check_email_code`). At most :data:`CODES_PER_WINDOW` codes per conversation
  and per order in :data:`CODE_WINDOW`. The mail is in the conversation's language
  (:func:`app.conversations.language.for_customer`).
- **helpdesk email** (medium): the helpdesk sender's email is the email of exactly one
  customer of the shop (:func:`establish_helpdesk_sender`).
- anything else, such as an order number typed into chat, is at most a claim.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app import audit
from app.actors import Actor
from app.cases.models import Case, CaseStatus, Customer, Order
from app.conversations.language import (
    ENGLISH,
    customer_locale,
    for_customer,
    supported_language,
)
from app.conversations.models import Conversation, IdentityMethod, VerificationCode
from app.errors import TooManyRequests
from app.guard import IdentityLevel
from app.words import said
from integrations.mail import Mailer

CODE_LIFETIME = timedelta(minutes=10)
MAX_ATTEMPTS = 5
CODES_PER_WINDOW = 3
CODE_WINDOW = timedelta(minutes=15)
CODE_DIGITS = 6


def establish(
    session: Session,
    *,
    conversation: Conversation,
    customer: Customer,
    level: IdentityLevel,
    method: IdentityMethod,
    actor: Actor,
    now: datetime,
) -> bool:
    """Raise the conversation (and its open case) to ``level`` for ``customer``.

    Returns False, changing nothing, when the conversation is already at least that
    sure, or already verified as someone else (a shared computer: the earlier shopper's
    conversation is never handed to the next one)."""
    if conversation.customer_id not in (None, customer.id) and conversation.identity_level in (
        IdentityLevel.MEDIUM,
        IdentityLevel.STRONG,
    ):
        return False
    if IdentityLevel(conversation.identity_level) >= level and conversation.customer_id:
        return False
    conversation.customer_id = customer.id
    conversation.identity_level = level.value
    conversation.identity_method = method.value
    conversation.identity_at = now
    open_case = session.scalars(
        select(Case).where(
            Case.conversation_id == conversation.id, Case.status != CaseStatus.RESOLVED
        )
    ).one_or_none()
    if open_case is not None:
        open_case.customer_id = customer.id
        open_case.identity_level = level.value
        open_case.updated_at = now
    audit.record(
        session,
        shop_id=conversation.shop_id,
        kind="conversation.identity_established",
        actor=actor,
        case_id=open_case.id if open_case else None,
        data={
            "conversation_id": str(conversation.id),
            "level": level.value,
            "method": method.value,
        },
        now=now,
    )
    return True


def establish_logged_in(
    session: Session,
    *,
    conversation: Conversation,
    shopify_customer_id: str,
    actor: Actor,
    now: datetime,
) -> Customer:
    """The shopper is the storefront customer Shopify's signed proxy request named.

    A customer we have not seen is added with their Shopify id; their orders are read
    from Shopify before the draft that answers them (:mod:`app.drafting.jobs`)."""
    gid = f"gid://shopify/Customer/{shopify_customer_id}"
    customer = session.scalars(
        select(Customer).where(
            Customer.shop_id == conversation.shop_id, Customer.shopify_customer_id == gid
        )
    ).first()
    if customer is None:
        customer = Customer(
            id=uuid.uuid4(), shop_id=conversation.shop_id, shopify_customer_id=gid, created_at=now
        )
        session.add(customer)
        session.flush()
    conversation.storefront_customer_ref = shopify_customer_id
    establish(
        session,
        conversation=conversation,
        customer=customer,
        level=IdentityLevel.STRONG,
        method=IdentityMethod.LOGGED_IN,
        actor=actor,
        now=now,
    )
    return customer


def establish_helpdesk_sender(
    session: Session,
    *,
    conversation: Conversation,
    sender_email: str,
    actor: Actor,
    now: datetime,
) -> Customer | None:
    """Medium identity when the sender's email is one customer's email in this shop."""
    matches = list(
        session.scalars(
            select(Customer).where(
                Customer.shop_id == conversation.shop_id,
                func.lower(Customer.email) == sender_email.strip().lower(),
            )
        )
    )
    if len(matches) != 1:
        return None
    establish(
        session,
        conversation=conversation,
        customer=matches[0],
        level=IdentityLevel.MEDIUM,
        method=IdentityMethod.HELPDESK_EMAIL,
        actor=actor,
        now=now,
    )
    return matches[0]


def email_hint(email: str) -> str:
    """``jane@example.com`` -> ``j•••@example.com``: enough to recognise, not to learn."""
    local, _, domain = email.strip().partition("@")
    return f"{local[:1]}•••@{domain}" if domain else "•••"


def normalised_order_name(value: str) -> str:
    """``1001``, ``#1001`` and `` #1001 `` all name order ``#1001``."""
    value = value.strip()
    return value if value.startswith("#") else f"#{value}"


@dataclass(frozen=True)
class CodeRequest:
    """What :func:`request_email_code` decided: the hint to show the shopper, and the mail
    to send once the caller has committed (None when the order and email did not match).
    Committing first means no code is ever mailed that the database does not hold."""

    hint: str
    mail: CodeMail | None

    def send(self, mailer: Mailer) -> None:
        if self.mail is not None:
            self.mail.send(mailer)


@dataclass(frozen=True)
class CodeMail:
    to: str
    shop_name: str
    locale: str  # the conversation's: the shopper reads the mail in the chat's language
    code: str = field(repr=False)

    def send(self, mailer: Mailer) -> None:
        minutes = int(CODE_LIFETIME.total_seconds() // 60)
        subject = said("Your %(shop)s verification code", shop=self.shop_name)
        body = said(
            "Your code is %(code)s.\n\n"
            "Type it into the chat on %(shop)s's store to show it is you. It works once and "
            "expires in %(minutes)s minutes.\n"
            "If you did not ask for it, ignore this mail.",
            code=self.code,
            shop=self.shop_name,
            minutes=minutes,
        )
        mailer.send(
            to=self.to,
            subject=for_customer(subject, self.locale),
            body=for_customer(body, self.locale),
            language=supported_language(self.locale) or ENGLISH,
        )


def request_email_code(
    session: Session,
    *,
    conversation: Conversation,
    order_name: str,
    email: str,
    shop_name: str,
    locale: str | None,
    secret: bytes,
    actor: Actor,
    now: datetime,
) -> CodeRequest:
    """A code for the order's email when ``order_name`` and ``email`` match our copy,
    mailed in ``locale`` (the conversation's).

    The shopper sees the same hint whether or not they matched. Raises
    :class:`TooManyRequests` past the limits."""
    _refuse_too_many(session, conversation=conversation, now=now)
    order = session.scalars(
        select(Order).where(
            Order.shop_id == conversation.shop_id, Order.name == normalised_order_name(order_name)
        )
    ).one_or_none()
    customer = session.get(Customer, order.customer_id) if order is not None else None
    matched_order = (
        order
        if order is not None
        and customer is not None
        and customer.email is not None
        and hmac.compare_digest(customer.email.strip().lower(), email.strip().lower())
        else None
    )
    matched = matched_order is not None
    if matched_order is not None:
        _refuse_too_many(session, conversation=conversation, order_id=matched_order.id, now=now)
    code = f"{secrets.randbelow(10**CODE_DIGITS):0{CODE_DIGITS}d}"
    row = VerificationCode(
        id=uuid.uuid4(),
        shop_id=conversation.shop_id,
        conversation_id=conversation.id,
        order_id=matched_order.id if matched_order is not None else None,
        code_digest="",
        expires_at=now + CODE_LIFETIME,
        created_at=now,
    )
    row.code_digest = _digest(secret, row.id, code)
    session.add(row)
    audit.record(
        session,
        shop_id=conversation.shop_id,
        kind="conversation.code_requested",
        actor=actor,
        data={"conversation_id": str(conversation.id), "sent": matched},
        now=now,
    )
    session.flush()
    mail = (
        CodeMail(to=customer.email, shop_name=shop_name, locale=customer_locale(locale), code=code)
        if matched and customer is not None and customer.email
        else None
    )
    return CodeRequest(hint=email_hint(email), mail=mail)


class CodeCheck(StrEnum):
    ACCEPTED = "accepted"
    WRONG = "wrong"
    EXPIRED = "expired"  # none outstanding: expired, spent, or out of attempts


@dataclass(frozen=True)
class CodeResult:
    check: CodeCheck
    customer: Customer | None = None


def check_email_code(
    session: Session,
    *,
    conversation: Conversation,
    code: str,
    secret: bytes,
    actor: Actor,
    now: datetime,
) -> CodeResult:
    """Compare ``code`` with the conversation's newest outstanding code.

    Every guess counts, right or wrong, so the caller commits whatever the result."""
    row = session.scalars(
        select(VerificationCode)
        .where(
            VerificationCode.conversation_id == conversation.id,
            VerificationCode.used_at.is_(None),
            VerificationCode.expires_at > now,
            VerificationCode.attempts < MAX_ATTEMPTS,
        )
        .order_by(VerificationCode.created_at.desc())
        .limit(1)
        .with_for_update()
    ).one_or_none()
    if row is None:
        return CodeResult(CodeCheck.EXPIRED)
    row.attempts += 1
    right = hmac.compare_digest(row.code_digest, _digest(secret, row.id, code.strip()))
    if not right or row.order_id is None:
        return CodeResult(CodeCheck.WRONG)
    row.used_at = now
    order = session.get(Order, row.order_id)
    customer = session.get(Customer, order.customer_id) if order else None
    if customer is None:
        return CodeResult(CodeCheck.WRONG)
    conversation.order_id = row.order_id
    establish(
        session,
        conversation=conversation,
        customer=customer,
        level=IdentityLevel.STRONG,
        method=IdentityMethod.EMAIL_CODE,
        actor=actor,
        now=now,
    )
    return CodeResult(CodeCheck.ACCEPTED, customer)


def _refuse_too_many(
    session: Session,
    *,
    conversation: Conversation,
    now: datetime,
    order_id: uuid.UUID | None = None,
) -> None:
    where = (
        VerificationCode.order_id == order_id
        if order_id is not None
        else VerificationCode.conversation_id == conversation.id
    )
    recent = list(
        session.scalars(
            select(VerificationCode.created_at)
            .where(
                VerificationCode.shop_id == conversation.shop_id,
                where,
                VerificationCode.created_at > now - CODE_WINDOW,
            )
            .order_by(VerificationCode.created_at)
        )
    )
    if len(recent) >= CODES_PER_WINDOW:
        wait = recent[0] + CODE_WINDOW - now
        raise TooManyRequests(
            said("Too many codes were asked for. Please try again in a few minutes."),
            retry_after=int(wait.total_seconds()) + 1,
            field="order",
        )


def _digest(secret: bytes, code_id: uuid.UUID, code: str) -> str:
    # Keyed and salted by the row: a copy of the table alone cannot be searched for codes.
    return hmac.new(secret, f"{code_id}:{code}".encode(), hashlib.sha256).hexdigest()
