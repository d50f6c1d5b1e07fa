"""A customer's conversations under Shopify's privacy topics: Maya chatted in the
storefront (verified by a mailed code) and wrote through a Gorgias ticket; Claude drafted
her case, an agent drafted a reply for a person to send, and her refund succeeded. Her
data request hands all of it over; her erasure leaves none of her words, email or name
in any table, keeps the refund and the chain, and leaves another customer's chat alone;
the shop's erasure blanks every chat, an anonymous shopper's too."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import timedelta

import pytest
from flask import Flask
from flask.testing import FlaskClient
from shopify_app_support import (
    APP_SECRET,
    answer_queued_privacy_request,
    bearer,
    deliver,
    install_shop,
    session_token,
)
from sqlalchemy import JSON, String, Text, cast, func, or_, select
from sqlalchemy.orm import Session
from storefront_support import Shopper, newest_code

from app.actors import PROVIDER_REPORT, Surface, staff
from app.agents.replies import keep_agent_reply
from app.agents.service import issue_agent_credential
from app.audit import AuditEvent, verify_chain
from app.cases.models import Case, Customer, Order
from app.cases.proposals import Proposal, ProposalStatus
from app.clock import utcnow
from app.connections.adapters import connection_adapters
from app.conversations.models import (
    Author,
    Channel,
    Conversation,
    HelpdeskCommand,
    Message,
    Participant,
)
from app.conversations.updates import tell_customer
from app.crypto import secret_box
from app.db import Base, Database
from app.drafting.drafters import ClaudeDrafter, RulesDrafter
from app.drafting.jobs import draft_for_message
from app.drafting.models import CaseDraftRecord
from app.execution.models import Action, ActionStatus, ProviderEvent
from app.helpdesk.connection import GORGIAS, SECRET_HEADER, save_gorgias_connection
from app.helpdesk.gorgias_desk import gorgias_desks
from app.helpdesk.jobs import HelpdeskContext, work_call
from app.jobs.connection import connect_redis
from app.privacy.service import ERASED
from app.settings import Settings
from app.shops.models import Shop, StaffMember, StaffRole
from integrations.anthropic.sandbox import DEMO_API_KEY, AnthropicSandbox, answers
from integrations.gorgias.sandbox import ApiUser, GorgiasSandbox
from integrations.mail import Outbox

EMAIL = "maya.reyes@example.com"
NAME = "Maya Reyes"
# Maya's own words: in the chat, in her ticket, and quoted back in staff's summary.
CHAT_WORDS = "Hi, my linen apron split along the pocket seam after one wash."
CHAT_PHRASE = "split along the pocket seam"
TICKET_WORDS = "Writing from my email too: photos of the apron taken at 14 Orchard Lane."
TICKET_PHRASE = "14 Orchard Lane"
AGENT_REPLY = f"Hi {NAME}, thank you for the photos. A colleague will write to you today."
SAM_EMAIL = "sam.okafor@example.com"
SAM_WORDS = "The handle of my bread basket snapped clean off."
STRANGER_WORDS = "Do you ship tea towels to Tromso in winter?"
OWNER = "1001"
API_USER, API_KEY = "support@linen.example", "gorgias-privacy-api-key-0123456789"


@pytest.fixture(scope="module")
def gorgias() -> Iterator[GorgiasSandbox]:
    box = GorgiasSandbox(integration_retry_delays=(), integration_timeout=5.0)
    box.start()
    yield box
    box.stop()


@pytest.fixture(scope="module")
def served_claude() -> Iterator[AnthropicSandbox]:
    box = AnthropicSandbox()
    box.start()
    yield box
    box.stop()


@pytest.fixture
def claude(served_claude: AnthropicSandbox) -> Iterator[ClaudeDrafter]:
    served_claude.reset()
    assert served_claude.url is not None
    yield ClaudeDrafter(
        api_key=DEMO_API_KEY,
        base_url=served_claude.url,
        model="claude-sonnet-4-5",
        timeout_seconds=5.0,
        max_retries=0,
    )
    served_claude.reset()


@pytest.fixture
def settings(settings: Settings, gorgias: GorgiasSandbox) -> Settings:
    assert gorgias.url is not None
    return replace(settings, gorgias_api_base=gorgias.url)


@dataclass(frozen=True)
class Story:
    shop: Shop
    maya: uuid.UUID
    sam: uuid.UUID
    chat: uuid.UUID  # Maya's storefront conversation
    ticket: uuid.UUID  # her helpdesk conversation
    action: uuid.UUID
    messages: int  # in Maya's two conversations


@pytest.fixture
def story(
    app: Flask,
    client: FlaskClient,
    session: Session,
    settings: Settings,
    gorgias: GorgiasSandbox,
    served_claude: AnthropicSandbox,
    claude: ClaudeDrafter,
) -> Story:
    shop = install_shop(session, settings, "linen").shop
    session.add(StaffMember(shop_id=shop.id, user_id=OWNER, role=StaffRole.OWNER))
    maya = Customer(
        shop_id=shop.id,
        email=EMAIL,
        name=NAME,
        stripe_customer_id="cus_maya",
        shopify_customer_id="gid://shopify/Customer/7",
        merchant_customer_id="shopper-7",
    )
    sam = Customer(
        shop_id=shop.id,
        email=SAM_EMAIL,
        name="Sam Okafor",
        shopify_customer_id="gid://shopify/Customer/8",
    )
    session.add_all([maya, sam])
    session.flush()
    session.add(
        Order(
            shop_id=shop.id,
            customer_id=maya.id,
            name="#1001",
            currency="usd",
            total=9600,
            payment_provider="stripe",
            payment_id="pi_maya",
            lines=[
                {"id": "L1", "title": "Linen apron", "quantity": 2, "paid": 4800},
                {"id": "L2", "title": "Tea towel", "quantity": 3, "paid": 4800},
            ],
        )
    )
    session.commit()
    app.config["CASEWARD_PROXY_PER_SHOPPER"] = "10000/minute"

    # The storefront: Maya writes, proves who she is with the mailed code; Sam, logged
    # in, and a shopper who never says who they are write too.
    chatting = Shopper(client, shop.domain, secret=APP_SECRET)
    chatting.say(CHAT_WORDS)
    sent = chatting.post("/chat/verification", {"order": "#1001", "email": EMAIL})
    assert sent.status_code == 200, sent.get_json()
    code = newest_code(Outbox(settings.mail_outbox_path, settings.mail_from), EMAIL)
    verified = chatting.post("/chat/verification/code", {"code": code})
    assert verified.status_code == 200, verified.get_json()
    Shopper(client, shop.domain, secret=APP_SECRET, logged_in_customer_id="8").say(SAM_WORDS)
    Shopper(client, shop.domain, secret=APP_SECRET).say(STRANGER_WORDS)
    chat = session.scalars(select(Conversation).where(Conversation.customer_id == maya.id)).one()
    assert (chat.identity_level, chat.identity_method) == ("strong", "email_code")

    # Claude drafts her case; its summary for staff quotes her.
    served_claude.queue(
        answers.tool_use(
            {
                "summary": f"{NAME} says the apron {CHAT_PHRASE}; she asks what can be done.",
                "next_step": "answer",
                "free_text": f"I'm so sorry about the apron, {NAME}.",
                "proposal": None,
                "needs_person_reason": None,
            }
        )
    )
    box = secret_box(settings)
    factory = Database.state(app).session_factory
    her_message = session.scalars(
        select(Message.id).where(
            Message.conversation_id == chat.id, Message.author == Author.CUSTOMER
        )
    ).one()
    drafted, _ = draft_for_message(
        factory, connection_adapters(settings, box), settings, claude, her_message, now=utcnow()
    )
    assert drafted == "drafted: answer"

    # Her refund, approved and reported succeeded by the provider, and the update she got.
    session.expire_all()
    case = session.scalars(select(Case).where(Case.conversation_id == chat.id)).one()
    now = utcnow()
    proposal = Proposal(
        shop_id=shop.id,
        case_id=case.id,
        kind="refund",
        provider="stripe",
        target="pi_maya",
        customer_ref="cus_maya",
        amount=4800,
        currency="usd",
        money_ref="pi_maya",
        proposed_by="system:drafter",
        status=ProposalStatus.APPROVED,
        verdict={},
        policy_version=0,
        digest="d" * 64,
    )
    session.add(proposal)
    session.flush()
    action = Action(
        shop_id=shop.id,
        case_id=case.id,
        proposal_id=proposal.id,
        proposal_revision=1,
        digest="d" * 64,
        kind="refund",
        provider="stripe",
        target="pi_maya",
        customer_ref="cus_maya",
        amount=4800,
        currency="usd",
        money_ref="pi_maya",
        idempotency_key=f"caseward-action-{uuid.uuid4()}",
        status=ActionStatus.SUCCEEDED,
        provider_ref="re_maya",
        approval_expires_at=now + timedelta(days=1),
    )
    session.add(action)
    session.flush()
    assert tell_customer(session, action=action, case=case, actor=PROVIDER_REPORT, now=now)

    # An outside agent drafts a reply for a person to send.
    agent = issue_agent_credential(
        session,
        shop=shop,
        actor=staff(OWNER, Surface.SHOPIFY_ADMIN),
        name="Support assistant",
        allowed_kinds=["refund"],
        ceiling=None,
        now=now,
    ).credential
    keep_agent_reply(session, case=case, agent=agent, body=AGENT_REPLY, now=now)
    session.commit()

    # Her Gorgias ticket: the call kept at the helpdesk door, then worked as the job does.
    account = f"linen-{uuid.uuid4().hex[:8]}"
    domain = gorgias.create_account(account, api_users=[ApiUser(API_USER, API_KEY, "Support")])
    connected = save_gorgias_connection(
        session,
        shop=shop,
        actor=staff(OWNER, Surface.SHOPIFY_ADMIN),
        domain=account,
        username=API_USER,
        api_key=API_KEY,
        box=box,
        check=lambda account: None,
        now=now,
    )
    session.commit()
    ticket_id = gorgias.open_ticket(
        domain,
        customer_email=EMAIL,
        customer_name=NAME,
        subject="Apron seam",
        body_text=TICKET_WORDS,
    )
    call = client.post(
        f"/helpdesk/gorgias/{connected.connection.id}/events",
        json={"event": "ticket-created", "ticket_id": ticket_id, "updated": "2024-05-02"},
        headers={SECRET_HEADER: str(connected.new_secret)},
    )
    assert call.status_code == 200, call.get_json()
    (shop_id, call_key) = session.execute(
        select(ProviderEvent.shop_id, ProviderEvent.event_id).where(
            ProviderEvent.provider == GORGIAS
        )
    ).one()
    helpdesk = HelpdeskContext(
        session_factory=factory,
        adapters=connection_adapters(settings, box),
        settings=settings,
        box=box,
        desks=gorgias_desks(settings, connect_redis(settings)),
        drafter=RulesDrafter(),
    )
    assert work_call(helpdesk, shop_id, call_key)[0].startswith("1 received")

    session.expire_all()
    ticket = session.scalars(select(Conversation).where(Conversation.channel == "helpdesk")).one()
    assert (ticket.customer_id, ticket.identity_method) == (maya.id, "helpdesk_email")
    messages = session.scalar(
        select(func.count())
        .select_from(Message)
        .where(Message.conversation_id.in_((chat.id, ticket.id)))
    )
    return Story(shop, maya.id, sam.id, chat.id, ticket.id, action.id, messages or 0)


def _holding(session: Session, needle: str) -> set[str]:
    """Every ``table.column`` of every table whose text (JSON included) holds ``needle``."""
    found: set[str] = set()
    for table in Base.metadata.sorted_tables:
        columns = [c for c in table.columns if isinstance(c.type, String | JSON)]
        texts = [cast(column, Text) for column in columns]
        if not columns:
            continue
        rows = session.execute(
            select(*texts).where(or_(*(text.ilike(f"%{needle}%") for text in texts)))
        )
        for row in rows:
            found.update(
                f"{table.name}.{column.name}"
                for column, value in zip(columns, row, strict=True)
                if value is not None and needle.lower() in value.lower()
            )
    return found


def _redact_maya(app: Flask, client: FlaskClient, settings: Settings, shop: Shop) -> str:
    redact = {
        "shop_id": 1,
        "shop_domain": shop.domain,
        "customer": {"id": 7, "email": EMAIL},
        "orders_to_redact": [1001],
    }
    deliver(client, shop.domain, "customers/redact", redact)
    return answer_queued_privacy_request(app, settings)


def test_the_data_request_hands_over_her_conversations_and_drafted_replies(
    app: Flask, client: FlaskClient, session: Session, settings: Settings, story: Story
) -> None:
    request = {"customer": {"id": 7, "email": EMAIL}, "data_request": {"id": 77}}
    deliver(client, story.shop.domain, "customers/data_request", request)
    assert answer_queued_privacy_request(app, settings).startswith("exported 1 customers")

    owner = bearer(session_token(story.shop.domain, OWNER))
    [listed] = client.get("/api/privacy/exports", headers=owner).get_json()["exports"]
    export = client.get(f"/api/privacy/exports/{listed['id']}", headers=owner).get_json()
    [maya] = export["content"]["customers"]
    assert maya["merchant_customer_id"] == "shopper-7"
    chat, ticket = maya["conversations"]
    assert (chat["channel"], chat["identity"]["level"], chat["identity"]["method"]) == (
        "storefront",
        "strong",
        "email_code",
    )
    assert chat["identity"]["established_at"]
    said = [(m["author"], m["body"]) for m in chat["messages"]]
    assert said[0] == ("customer", CHAT_WORDS)
    assert any(author == "caseward" and NAME in body for author, body in said)
    assert any("Your refund of $48.00 has been made" in body for _, body in said)
    assert all(m["created_at"] for m in chat["messages"])
    assert (ticket["channel"], ticket["identity"]["method"]) == ("helpdesk", "helpdesk_email")
    assert [(m["author"], m["body"]) for m in ticket["messages"]] == [("customer", TICKET_WORDS)]
    chat_case = next(c for c in maya["cases"] if c["actions"])
    assert [(a["amount"], a["status"]) for a in chat_case["actions"]] == [(4800, "succeeded")]
    assert [r["reply"] for r in chat_case["drafted_replies"]] == [AGENT_REPLY]
    assert SAM_WORDS not in json.dumps(export) and STRANGER_WORDS not in json.dumps(export)


def test_her_erasure_leaves_none_of_her_words_keeps_the_refund_and_the_chain(
    app: Flask, client: FlaskClient, session: Session, settings: Settings, story: Story
) -> None:
    assert _holding(session, CHAT_PHRASE) >= {
        "conversation_messages.body",
        "cases.request_text",
        "case_drafts.summary",
    }
    assert "case_drafts.reply" in _holding(session, AGENT_REPLY)
    # An agent's "prepare case" on her ticket: its note, kept with the command, in her words.
    session.add(
        HelpdeskCommand(
            shop_id=story.shop.id,
            note_id=5,
            conversation_id=story.ticket,
            command="prepare case",
            call_key="call",
            claimed_at=utcnow(),
            done_at=utcnow(),
            note=f"Caseward drafted this case. Summary: {TICKET_WORDS}",
        )
    )
    session.commit()
    assert "helpdesk_commands.note" in _holding(session, TICKET_PHRASE)

    assert _redact_maya(app, client, settings, story.shop) == "erased 1 customers"

    session.expire_all()
    for needle in (EMAIL, NAME, CHAT_PHRASE, TICKET_PHRASE, "Apron seam", AGENT_REPLY):
        assert _holding(session, needle) == set(), needle
    hers = list(
        session.scalars(select(Conversation).where(Conversation.id.in_((story.chat, story.ticket))))
    )
    assert {(c.customer_id, c.identity_level) for c in hers} == {
        (story.maya, "strong"),
        (story.maya, "medium"),
    }
    assert all(c.pending_step is None and c.locale is None for c in hers)
    messages = list(
        session.scalars(select(Message).where(Message.conversation_id.in_([c.id for c in hers])))
    )
    assert len(messages) == story.messages
    assert {m.body for m in messages} == {ERASED}
    assert all(m.sentence is None for m in messages)
    [update] = [m for m in messages if m.about_action_id == story.action]
    assert update.about_status == ActionStatus.SUCCEEDED  # what she was told of, and when
    participants = session.scalars(
        select(Participant).where(Participant.conversation_id.in_([c.id for c in hers]))
    )
    assert {(p.email, p.name) for p in participants} == {(None, None)}
    drafts = list(session.scalars(select(CaseDraftRecord)))
    assert {d.summary for d in drafts if d.drafter == "claude"} == {ERASED}
    assert {d.reply for d in drafts if d.drafter == "agent"} == {ERASED}
    # The books: the refund, its amount and the provider's word; the order she paid.
    action = session.get(Action, story.action)
    assert action is not None
    assert (action.amount, action.currency, action.status, action.provider_ref) == (
        4800,
        "usd",
        "succeeded",
        "re_maya",
    )
    order = session.scalars(select(Order).where(Order.customer_id == story.maya)).one()
    assert (order.name, order.total) == ("#1001", 9600)
    assert verify_chain(session, story.shop.id).intact
    [erased] = session.scalars(
        select(AuditEvent.data).where(AuditEvent.kind == "customer.erased")
    ).all()
    assert erased["conversations"] == 2 and erased["messages"] == story.messages
    assert erased["cases"] == 2
    # Sam's chat and the stranger's are theirs, untouched.
    assert _holding(session, SAM_WORDS) >= {"conversation_messages.body", "cases.request_text"}
    assert "conversation_messages.body" in _holding(session, STRANGER_WORDS)
    sam = session.get(Customer, story.sam)
    assert sam is not None and sam.email == SAM_EMAIL


DRAFT_OWED = Message.draft_owed_since.is_not(None)


def test_the_shops_erasure_blanks_every_conversation_an_anonymous_shoppers_too(
    app: Flask, client: FlaskClient, session: Session, settings: Settings, story: Story
) -> None:
    # Sam's and the stranger's messages are still owed drafts: nobody drafted them.
    assert len(session.scalars(select(Message).where(DRAFT_OWED)).all()) == 2
    deliver(client, story.shop.domain, "shop/redact", {"shop_domain": story.shop.domain})

    assert answer_queued_privacy_request(app, settings).startswith("erased 2 customers")
    session.expire_all()
    for needle in (EMAIL, SAM_EMAIL, CHAT_PHRASE, TICKET_PHRASE, SAM_WORDS, STRANGER_WORDS):
        assert _holding(session, needle) == set(), needle
    assert set(session.scalars(select(Message.body))) == {ERASED}
    # Nothing is left to answer: no job drafts from the erased words' placeholder.
    assert session.scalars(select(Message).where(DRAFT_OWED)).all() == []
    assert set(session.scalars(select(Case.subject))) == {ERASED}
    assert session.scalars(select(Conversation.channel)).all().count(Channel.STOREFRONT) == 3
    action = session.get(Action, story.action)
    assert action is not None and (action.amount, action.status) == (4800, "succeeded")
    assert verify_chain(session, story.shop.id).intact
    counts = {
        data["customer_id"]: (data["conversations"], data["messages"])
        for data in session.scalars(
            select(AuditEvent.data).where(AuditEvent.kind == "customer.erased")
        )
    }
    assert counts[str(story.maya)] == (2, story.messages)
    assert counts[str(story.sam)][0] == 1
