"""The storefront chat, reached only through Shopify's signed app proxy.

Every request, before anything is read: the app proxy's signature and timestamp are
verified with the app secret (:meth:`integrations.shopify.auth.ShopifyAuth.verify_app_proxy`,
constant time, 90 s); the shop is the one Shopify signed for; the shopper is the
conversation whose token their browser holds (only its SHA-256 is stored), and a
logged-in customer is whoever Shopify's signed ``logged_in_customer_id`` names. A
conversation verified by one login is never shown to another. Requests are rate-limited
per shopper and per shop.

What a shopper receives is cut for them: their messages, whether they are verified
(with a hint of the email), the order number they already wrote (for the verify step),
their case's status in words and their own actions' updates. Never a verdict, another
customer's data, other actions or shop figures.

Everything Caseward says there is in the shopper's language
(:mod:`app.conversations.language`): the widget sends the storefront's locale as
``?locale=`` with every request (a query parameter, so Shopify's signature covers it); the
conversation keeps it, a later request in another supported language changes it, and the
answers, the widget's own labels (``labels``), the refusals' messages and what is added
to the conversation are said in it. The refusals keep their English ``code`` and ``field``.

The endpoints (paths after ``/apps/caseward``): ``GET /chat``, ``POST /chat/messages``,
``POST /chat/verification``, ``POST /chat/verification/code``, ``POST /chat/choices``
(refund or store credit, where the shop's policy offers credit), ``POST /chat/person``.
Drafting runs after the commit, on the background queue; a shopper who logs in to the
storefront during a conversation has their newest message drafted again, with their orders.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from flask import Blueprint, Response, current_app, g, jsonify, request
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.actors import Actor, ActorKind, Surface
from app.cases.models import Case, CaseStatus, Customer
from app.cases.proposals import Proposal, ProposalStatus
from app.clock import utcnow
from app.conversations.identity import (
    CodeCheck,
    check_email_code,
    email_hint,
    establish_logged_in,
    request_email_code,
)
from app.conversations.language import customer_locale, for_customer, supported_language
from app.conversations.linking import link_order
from app.conversations.models import Author, Channel, Conversation
from app.conversations.service import (
    add_reply,
    current_case,
    find_conversation,
    messages_of,
    receive_message,
    start_storefront_conversation,
    storefront_ref,
)
from app.conversations.to_customer import action_words
from app.db import request_session
from app.drafting.jobs import owe_draft_with_orders
from app.drafting.service import choose_offer, hand_to_person, offers
from app.errors import CasewardError, InvalidInput, NotFound, Unauthenticated
from app.execution.models import Action, ActionStatus
from app.guard import IdentityLevel
from app.money import Money
from app.shops.models import Shop
from app.validation import text
from app.web.api.parsing import json_body
from app.web.dispatch import queue_drafting, queue_execution
from app.web.errors import status_of
from app.web.security import limiter
from app.web.shopify_admin import shopify_auth
from app.web.widget_words import labels
from app.words import Sentence, said
from integrations.mail import mailer_for
from integrations.shopify.auth import Refusal, VerifiedProxyRequest

bp = Blueprint("proxy", __name__, url_prefix="/proxy")

LIMIT_DEFAULTS = {
    "CASEWARD_PROXY_PER_SHOPPER": "60/minute",
    "CASEWARD_PROXY_PER_SHOP": "1200/minute",
}
# How soon the widget asks again while its panel is open, in seconds.
POLL_AFTER = 5
TOKEN_LENGTH = 64


def _verified() -> tuple[VerifiedProxyRequest, Shop]:
    """The signed request and its shop, verified once per request."""
    if "proxy_request" not in g:
        auth = shopify_auth(current_app)
        if auth is None:
            raise NotFound(said("Shopify is not configured for this Caseward"))
        verification = auth.verify_app_proxy(
            request.method, request.url, dict(request.headers), request.get_data(cache=True)
        )
        if isinstance(verification, Refusal):
            raise Unauthenticated(said("the storefront request is not signed by Shopify"))
        shop = (
            request_session()
            .scalars(select(Shop).where(Shop.domain == verification.shop))
            .one_or_none()
        )
        if shop is None or shop.uninstalled_at is not None:
            raise NotFound(said("this shop does not use Caseward"))
        g.proxy_request, g.proxy_shop = verification, shop
    return g.proxy_request, g.proxy_shop


def _shopper_key() -> str:
    verified, shop = _verified()
    token = _token_given()
    who = verified.logged_in_customer_id or (
        storefront_ref(token) if token else request.remote_addr
    )
    return f"proxy:{shop.id}:{who}"


def _shop_key() -> str:
    return f"proxy:{_verified()[1].id}"


def _limits(function: Any) -> Any:
    """Every chat endpoint counts against the same two limits: the shopper's, the shop's."""
    per_shopper = limiter.shared_limit(
        lambda: current_app.config["CASEWARD_PROXY_PER_SHOPPER"],
        scope="proxy-shopper",
        key_func=_shopper_key,
    )
    per_shop = limiter.shared_limit(
        lambda: current_app.config["CASEWARD_PROXY_PER_SHOP"],
        scope="proxy-shop",
        key_func=_shop_key,
    )
    return per_shop(per_shopper(function))


def init_app(app: Any) -> None:
    for name, value in LIMIT_DEFAULTS.items():
        app.config.setdefault(name, value)


@bp.get("/chat")
@_limits
def chat() -> Response:
    verified, shop = _verified()
    session = request_session()
    conversation = _conversation(session, shop, verified)
    redraft = None
    if conversation is not None:
        if g.pop("logged_in_now", False):
            # Logged in since their last message: it is answered again, with their orders.
            redraft = owe_draft_with_orders(session, conversation, utcnow())
        session.commit()
    if redraft is not None:
        queue_drafting(current_app, redraft.id)
    return jsonify(_state(session, shop, conversation, token=_token_given()))


@bp.post("/chat/messages")
@_limits
def send_message() -> tuple[Response, int]:
    verified, shop = _verified()
    body = json_body("conversation", "text")
    session = request_session()
    now = utcnow()
    conversation = _conversation(session, shop, verified)
    token = _token_given()
    if conversation is None:
        conversation, token = start_storefront_conversation(
            session,
            shop_id=shop.id,
            actor=_shopper(verified),
            now=now,
            locale=customer_locale(_requested_locale()),
        )
        _log_in(session, conversation, verified)
    received = receive_message(
        session,
        conversation=conversation,
        body=body.get("text"),  # type: ignore[arg-type]
        actor=_shopper(verified),
        now=now,
        owes_draft=True,
    )
    session.commit()
    if received is not None:
        queue_drafting(current_app, received[0].id)
    return jsonify(_state(session, shop, conversation, token=token)), 201


@bp.post("/chat/verification")
@_limits
def start_verification() -> Response:
    verified, shop = _verified()
    body = json_body("conversation", "order", "email")
    session = request_session()
    conversation = _required_conversation(session, shop, verified)
    order = text(body.get("order"), "order", max_length=32, required=True)
    email = text(body.get("email"), "email", max_length=320, required=True)
    if email is None or "@" not in email:
        raise InvalidInput(said("give the email you used for the order"), field="email")
    settings = current_app.config["CASEWARD_SETTINGS"]
    requested = request_email_code(
        session,
        conversation=conversation,
        order_name=order or "",
        email=email,
        shop_name=shop.name,
        locale=conversation.locale,
        secret=current_app.config["SECRET_KEY"].encode(),
        actor=_shopper(verified),
        now=utcnow(),
    )
    session.commit()
    requested.send(
        mailer_for(
            settings.mail_url, sender=settings.mail_from, outbox_folder=settings.mail_outbox_path
        )
    )
    return jsonify({"sent": True, "to": requested.hint})


@bp.post("/chat/verification/code")
@_limits
def check_code() -> Response:
    verified, shop = _verified()
    body = json_body("conversation", "code")
    session = request_session()
    conversation = _required_conversation(session, shop, verified)
    code = text(body.get("code"), "code", max_length=12, required=True) or ""
    now = utcnow()
    result = check_email_code(
        session,
        conversation=conversation,
        code=code,
        secret=current_app.config["SECRET_KEY"].encode(),
        actor=_shopper(verified),
        now=now,
    )
    verified_now = result.check is CodeCheck.ACCEPTED
    redraft = owe_draft_with_orders(session, conversation, now) if verified_now else None
    # Every guess counts, so it is kept whatever the answer.
    session.commit()
    if result.check is CodeCheck.EXPIRED:
        raise InvalidInput(
            said("That code has expired or was used up. Ask for a new one."), field="code"
        )
    if result.check is CodeCheck.WRONG:
        raise InvalidInput(
            said("That code is not right. Check the email and try again."), field="code"
        )
    if redraft is not None:
        queue_drafting(current_app, redraft.id)
    return jsonify(_state(session, shop, conversation, token=_token_given()))


@bp.post("/chat/choices")
@_limits
def choose() -> Response:
    verified, shop = _verified()
    body = json_body("conversation", "choice")
    session = request_session()
    conversation = _required_conversation(session, shop, verified)
    case = current_case(session, conversation)
    if case is None:
        raise InvalidInput(said("nothing is on offer in this conversation"), field="choice")
    result = choose_offer(
        session,
        shop=shop,
        case=case,
        conversation=conversation,
        choice=str(text(body.get("choice"), "choice", max_length=32, required=True)),
        actor=_shopper(verified),
        adapters=current_app.extensions["caseward.adapters"],
        settings=current_app.config["CASEWARD_SETTINGS"],
        now=utcnow(),
    )
    session.commit()
    if result is not None and result.action is not None:
        queue_execution(current_app, result.action.id)
    return jsonify(_state(session, shop, conversation, token=_token_given()))


@bp.post("/chat/person")
@_limits
def ask_for_person() -> Response:
    verified, shop = _verified()
    json_body("conversation")
    session = request_session()
    conversation = _required_conversation(session, shop, verified)
    now = utcnow()
    conversation.wants_person = True
    case = current_case(session, conversation)
    if case is not None and case.status != CaseStatus.NEEDS_ATTENTION:
        hand_to_person(
            session, case=case, actor=_shopper(verified), now=now, why="the customer asked"
        )
    # When to expect an answer, and that nothing needs saying twice.
    reply = said(
        "A member of the %(shop)s team will take it from here and reply in this chat, "
        "usually within one business day. Everything you wrote stays with your case: "
        "nobody will ask you again.",
        shop=shop.name,
    )
    add_reply(
        session,
        conversation=conversation,
        body=for_customer(reply, conversation.locale),
        sentence=reply,
        actor=_shopper(verified),
        now=now,
    )
    session.commit()
    return jsonify(_state(session, shop, conversation, token=_token_given()))


@bp.errorhandler(CasewardError)
def refused(error: CasewardError) -> tuple[Response, int]:
    """A refusal as the app's handler answers it (:mod:`app.web.errors`), its message in
    the shopper's language: the widget shows it beside the field it names."""
    request_session().rollback()
    body: dict[str, object] = {
        "code": error.code,
        "message": for_customer(error.sentence, customer_locale(_requested_locale())),
    }
    if error.field is not None:
        body["field"] = error.field
    response = jsonify({"error": body})
    response.headers.update(error.headers)
    return response, status_of(error)


# ---------------------------------------------------------------- helpers


def _requested_locale() -> str | None:
    """The storefront's locale as the widget sent it, else the browser's language."""
    return request.args.get("locale") or request.accept_languages.best


def _shopper(verified: VerifiedProxyRequest) -> Actor:
    who = verified.logged_in_customer_id or "storefront-visitor"
    return Actor(ActorKind.CUSTOMER, who, Surface.STOREFRONT)


def _token_given() -> str | None:
    given: object
    if request.method == "GET":
        given = request.args.get("conversation")
    else:
        body = request.get_json(silent=True)
        given = body.get("conversation") if isinstance(body, Mapping) else None
    if not isinstance(given, str) or not given or len(given) > TOKEN_LENGTH:
        return None
    return given


def _conversation(
    session: Session, shop: Shop, verified: VerifiedProxyRequest
) -> Conversation | None:
    """The shopper's conversation, if their token names one they may see."""
    token = _token_given()
    if token is None:
        return None
    conversation = find_conversation(
        session, shop_id=shop.id, channel=Channel.STOREFRONT, channel_ref=storefront_ref(token)
    )
    if conversation is None:
        return None
    bound = conversation.storefront_customer_ref
    if bound is not None and bound != verified.logged_in_customer_id:
        # Verified by another login (a shared computer): not this shopper's to see.
        return None
    requested = request.args.get("locale")
    if supported_language(requested):
        conversation.locale = customer_locale(requested)
    g.logged_in_now = _log_in(session, conversation, verified)
    return conversation


def _required_conversation(
    session: Session, shop: Shop, verified: VerifiedProxyRequest
) -> Conversation:
    conversation = _conversation(session, shop, verified)
    if conversation is None:
        raise InvalidInput(said("start the chat first"), field="conversation")
    return conversation


def _log_in(session: Session, conversation: Conversation, verified: VerifiedProxyRequest) -> bool:
    """Whether Shopify's signed login made the shopper known just now."""
    customer_id = verified.logged_in_customer_id
    if not customer_id or conversation.identity_level == IdentityLevel.STRONG:
        return False
    establish_logged_in(
        session,
        conversation=conversation,
        shopify_customer_id=customer_id,
        actor=_shopper(verified),
        now=utcnow(),
    )
    return conversation.identity_level == IdentityLevel.STRONG


def _state(
    session: Session, shop: Shop, conversation: Conversation | None, *, token: str | None
) -> dict[str, Any]:
    """What the shopper sees, in their language. ``token`` is the one their browser keeps
    (sent back with every answer); ``conversation`` None means there is none they may see,
    and the widget forgets its token."""
    locale = conversation.locale if conversation is not None else None
    locale = customer_locale(locale or _requested_locale())
    greeting = for_customer(said("Hi! How can %(shop)s help?", shop=shop.name), locale)
    if conversation is None:
        return {
            "conversation": None,
            "greeting": greeting,
            "labels": labels(locale),
            "identity": {"verified": False, "how": None, "email_hint": None},
            "verification": {"order": None},
            "messages": [],
            "case": None,
            "choices": [],
            "can_ask_for_person": True,
            "poll_after": POLL_AFTER,
        }
    verified = IdentityLevel(conversation.identity_level) >= IdentityLevel.MEDIUM
    customer = session.get(Customer, conversation.customer_id) if conversation.customer_id else None
    # The case before the messages: a status and its update to the customer commit together,
    # so a status read first always has its message in the (later) read of the messages.
    case = _case_state(session, conversation, locale)
    messages = messages_of(session, conversation)
    return {
        "conversation": token,
        "greeting": greeting,
        "labels": labels(locale),
        "identity": {
            "verified": verified,
            "how": conversation.identity_method if verified else None,
            "email_hint": email_hint(customer.email)
            if verified and customer and customer.email
            else None,
        },
        "verification": {
            "order": None
            if verified
            else _order_named([m.body for m in messages if m.author == Author.CUSTOMER])
        },
        "messages": [
            {
                "id": str(message.id),
                "from": "customer" if message.author == Author.CUSTOMER else "shop",
                "text": message.body,
                "at": message.created_at.isoformat(),
            }
            for message in messages
        ],
        "case": case,
        "choices": [
            {
                "id": offer.id,
                "label": for_customer(offer.label, locale),
            }
            for offer in offers(session, conversation)
        ],
        "can_ask_for_person": not conversation.wants_person,
        "poll_after": POLL_AFTER,
    }


def _order_named(texts: list[str]) -> str | None:
    """The order number the shopper wrote last (``#1001``), so the verify step asks for it
    no second time. Read as order linking reads names: with no orders of theirs known
    before verification, every name they wrote is one that matched none."""
    named = [quoted for quoted in link_order(texts, ()).unmatched if quoted.startswith("#")]
    return named[-1] if named else None


def _case_state(session: Session, conversation: Conversation, locale: str) -> dict[str, Any] | None:
    if conversation.case_id is None:
        return None
    case = session.get(Case, conversation.case_id)
    if case is None:
        return None
    actions = list(
        session.scalars(select(Action).where(Action.case_id == case.id).order_by(Action.created_at))
    )
    in_review = (
        session.scalars(
            select(Proposal.id).where(
                Proposal.case_id == case.id, Proposal.status == ProposalStatus.AWAITING_APPROVAL
            )
        ).first()
        is not None
    )
    status = _customer_status(case, actions, in_review)
    status_words = _status_words(status, actions[-1].kind if actions else None)
    return {
        "reference": case.reference,
        "status": status,
        "status_text": for_customer(status_words, locale),
        "updates": [
            {
                "kind": "store_credit" if action.kind == "customer_credit" else action.kind,
                "status": _update_status(action.status),
                "text": for_customer(_update_words(action), locale),
                "at": action.updated_at.isoformat(),
            }
            for action in actions
            if action.status not in ActionStatus.NOT_SENT
        ],
    }


_STATUS_WORDS = {
    "open": said("We are looking into it."),
    "in_review": said("Your request is with our team for review."),
    "approved": said("Approved; it is being sent to the payment provider."),
    "submitted": said("Submitted; waiting for the payment provider."),
    "completed": said("Done: the payment provider confirmed it."),
    "failed": said("It could not be completed; our team will contact you."),
    "with_person": said("A member of our team is looking at it."),
}
# A refund's own words where the customer expects them.
_REFUND_WORDS = {
    "submitted": said("Refund submitted; waiting for the payment provider."),
    "completed": said("Refunded: the payment provider confirmed it."),
}


def _status_words(status: str, kind: str | None) -> Sentence:
    if kind == "refund" and status in _REFUND_WORDS:
        return _REFUND_WORDS[status]
    return _STATUS_WORDS[status]


def _customer_status(case: Case, actions: list[Action], in_review: bool) -> str:
    latest = actions[-1].status if actions else None
    if latest == ActionStatus.SUCCEEDED:
        return "completed"
    if latest in ActionStatus.PROVIDER_PENDING:
        return "submitted"
    if latest in ActionStatus.PROVIDER_FAILED:
        return "failed"
    if case.status == CaseStatus.NEEDS_ATTENTION:
        return "with_person"
    if latest in ActionStatus.IN_FLIGHT:
        return "approved"
    return "in_review" if in_review else "open"


class UpdateStatus(StrEnum):
    """An action's status as its update tells the shopper (the JSON carries the value)."""

    PENDING = "pending"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    IN_REVIEW = "in_review"


def _update_status(status: str) -> UpdateStatus:
    if status in ActionStatus.PROVIDER_PENDING:
        return UpdateStatus.PENDING
    if status == ActionStatus.SUCCEEDED:
        return UpdateStatus.SUCCEEDED
    if status in ActionStatus.PROVIDER_FAILED:
        return UpdateStatus.FAILED
    return UpdateStatus.IN_REVIEW


def _update_words(action: Action) -> Sentence:
    amount = Money(action.amount, action.currency) if action.amount and action.currency else None
    what = action_words(action.kind, amount)
    status = _update_status(action.status)
    if status == UpdateStatus.PENDING:
        return said("Your %(what)s was submitted to the payment provider.", what=what)
    if status == UpdateStatus.SUCCEEDED:
        return said("Your %(what)s is done: the payment provider confirmed it.", what=what)
    if status == UpdateStatus.FAILED:
        return said("Your %(what)s could not be completed.", what=what)
    return said("Your %(what)s was approved and is being sent.", what=what)
