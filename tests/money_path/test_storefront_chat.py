"""The storefront chat end to end: a shopper writes through the signed app proxy, proves
who they are with a code from the order's email, the offline drafter proposes, a person
approves, a worker process refunds at the Stripe sandbox, and the shopper is told only
what the provider reported, once per status."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from money_path_harness import (
    Account,
    Staff,
    WorkerProcess,
    fail_as_rq_does,
    wait_for,
)
from rq import Queue
from rq.job import Job, JobStatus
from sqlalchemy import select
from sqlalchemy.orm import Session
from storefront_support import APP_SECRET, CLIENT_ID, Shopper, newest_code

from app.audit import AuditEvent
from app.background import sweep
from app.cases.models import Case, Customer
from app.clock import utcnow
from app.conversations.models import Conversation, Message
from app.conversations.to_customer import looking_into_it, thanks, with_a_person
from app.crypto import secret_box
from app.demo import APPROVER, OWNER, SHOP_DOMAIN, LinenShop, seed_linen_shop
from app.drafting.drafters import drafter_for
from app.drafting.jobs import draft_for_message
from app.execution.executor import ExecutionContext
from app.jobs.connection import RedisExtension
from app.settings import Settings
from integrations.mail import Outbox

ASKS = (
    "Hi! One of the two linen aprons I bought arrived with a torn seam. "
    "Could I get a refund for that one?"
)


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return replace(settings, shopify_api_key=CLIENT_ID, shopify_api_secret=APP_SECRET)


@pytest.fixture
def shopper(app: Flask, client: FlaskClient) -> Shopper:
    # The tests poll faster than a widget does; the limits have tests of their own.
    app.config["CASEWARD_PROXY_PER_SHOPPER"] = "10000/minute"
    return Shopper(client, SHOP_DOMAIN)


@pytest.fixture
def outbox(settings: Settings) -> Outbox:
    return Outbox(settings.mail_outbox_path, settings.mail_from)


def _shop_replies(shopper: Shopper, count: int) -> list[str]:
    state = wait_for(
        lambda: (
            (s := shopper.state())
            and len([m for m in s["messages"] if m["from"] == "shop"]) >= count
            and s
        ),
        what=f"{count} replies from the shop",
        timeout=60,
    )
    return [m["text"] for m in state["messages"] if m["from"] == "shop"]


def test_an_unverified_shopper_is_asked_to_verify_and_shown_no_order(
    linen: LinenShop, shopper: Shopper, worker: WorkerProcess
) -> None:
    state = shopper.say("Where is order #1001? It was $96.00.")

    assert state["identity"] == {"verified": False, "how": None, "email_hint": None}
    [reply] = _shop_replies(shopper, 1)
    assert "verify" in reply
    shown = " ".join(m["text"] for m in shopper.state()["messages"] if m["from"] == "shop")
    assert "1001" not in shown and "96" not in shown and "apron" not in shown.lower()


def test_a_verified_shoppers_refund_is_approved_once_and_told_as_the_provider_reports(
    linen: LinenShop,
    shopper: Shopper,
    outbox: Outbox,
    approver: Staff,
    account: Account,
    worker: WorkerProcess,
    session: Session,
) -> None:
    shopper.say(ASKS)
    _shop_replies(shopper, 1)

    sent = shopper.post("/chat/verification", {"order": "#1001", "email": "maya@example.com"})
    assert sent.get_json() == {"sent": True, "to": "m•••@example.com"}
    code = newest_code(outbox, "maya@example.com")
    wrong = shopper.post("/chat/verification/code", {"code": _another(code)})
    assert wrong.status_code == 400
    assert wrong.get_json()["error"]["field"] == "code"
    right = shopper.post("/chat/verification/code", {"code": code})
    assert right.status_code == 200, right.get_json()
    assert right.get_json()["identity"] == {
        "verified": True,
        "how": "email_code",
        "email_hint": "m•••@example.com",
    }

    replies = _shop_replies(shopper, 2)
    assert "$48.00" in replies[-1] and "review" in replies[-1]
    assert shopper.state()["case"]["status"] == "in_review"

    case_id = _drafted_case(approver, linen)
    proposal = approver.get(f"/api/cases/{case_id}").get_json()["proposals"][0]
    assert proposal["proposed_by"] == "system:drafter"
    assert proposal["amount"]["amount"] == 4800
    approved = approver.post(
        f"/api/proposals/{proposal['id']}/approve", {"digest": proposal["digest"]}
    )
    assert approved.status_code == 200, approved.get_json()

    final = wait_for(
        lambda: (s := shopper.state())["case"]["status"] == "completed" and s,
        what="the shopper to see the refund completed",
        timeout=60,
    )
    refunds = list(
        account.stripe.v1.refunds.list(params={"payment_intent": linen.payment_intent_id}).data
    )
    assert [(r.amount, r.status) for r in refunds] == [(4800, "succeeded")]
    told = [m["text"] for m in final["messages"] if m["from"] == "shop"]
    assert sum("has been made to your original payment method" in text for text in told) == 1
    # One update per status the provider reported, whatever reported it (answer, webhook).
    updates = session.scalars(
        select(Message.about_status).where(Message.about_action_id.is_not(None))
    ).all()
    assert sorted(updates) == sorted(set(updates)) and "succeeded" in updates


def _ask_and_verify(shopper: Shopper, outbox: Outbox) -> None:
    """Maya asks for her refund, is asked to verify, and does, with the mailed code."""
    shopper.say(ASKS)
    _shop_replies(shopper, 1)
    shopper.post("/chat/verification", {"order": "#1001", "email": "maya@example.com"})
    verified = shopper.post(
        "/chat/verification/code", {"code": newest_code(outbox, "maya@example.com")}
    )
    assert verified.status_code == 200, verified.get_json()


def _another(code: str) -> str:
    return str((int(code[0]) + 1) % 10) + code[1:]


def _drafted_case(staff: Staff, linen: LinenShop) -> str:
    cases = staff.get("/api/cases").get_json()["cases"]
    [drafted] = [c for c in cases if c["id"] != str(linen.case_id)]
    return str(drafted["id"])


def test_the_demos_story_runs_from_the_first_chat_message_with_one_click(
    app: Flask,
    settings: Settings,
    account: Account,
    session: Session,
    web_url: str,
    staff: Callable[[str], Staff],
    worker: WorkerProcess,
) -> None:
    seeded = seed_linen_shop(
        session,
        settings=settings,
        box=secret_box(settings),
        secret_key=account.secret_key,
        restricted_key=account.restricted_key,
        webhook_base_url=web_url,
        from_chat=True,
    )
    session.commit()
    approver = staff(APPROVER)
    levels = {
        (c.channel, c.identity_level, c.identity_method)
        for c in session.scalars(select(Conversation))
    }
    assert levels == {
        ("storefront", "strong", "email_code"),
        ("storefront", "none", None),
        ("helpdesk", "medium", "helpdesk_email"),
    }
    proposal = approver.get(f"/api/cases/{seeded.case_id}").get_json()["proposals"][0]
    assert (proposal["proposed_by"], proposal["amount"]["amount"]) == ("system:drafter", 4800)

    # The one staff click.
    approved = approver.post(
        f"/api/proposals/{proposal['id']}/approve", {"digest": proposal["digest"]}
    )
    assert approved.status_code == 200, approved.get_json()

    def told() -> list[str]:
        session.expire_all()
        case = session.get(Case, seeded.case_id)
        assert case is not None and case.conversation_id is not None
        return list(
            session.scalars(
                select(Message.body)
                .where(Message.conversation_id == case.conversation_id)
                .order_by(Message.created_at)
            )
        )

    messages = wait_for(
        lambda: (m := told()) and "original payment method" in m[-1] and m,
        what="Maya to be told the refund was made",
        timeout=60,
    )
    assert messages[0].startswith("Hi! One of the two linen aprons")
    assert "prepared a refund of $48.00" in messages[1]


def test_store_credit_offered_by_the_policy_becomes_the_proposal_the_shopper_chooses(
    linen: LinenShop,
    shopper: Shopper,
    outbox: Outbox,
    owner: Staff,
    approver: Staff,
    worker: WorkerProcess,
) -> None:
    saved = owner.put("/api/shop/policy", {"rules": {"store_credit_bonus_percent": 10}})
    assert saved.status_code == 200, saved.get_json()
    _ask_and_verify(shopper, outbox)

    offer = _shop_replies(shopper, 2)[-1]
    assert "$48.00" in offer and "$52.80 in store credit" in offer
    assert [c["id"] for c in shopper.state()["choices"]] == ["refund", "store_credit"]

    chosen = shopper.post("/chat/choices", {"choice": "store_credit"})
    assert chosen.status_code == 200, chosen.get_json()
    assert chosen.get_json()["choices"] == []
    assert "prepared a store credit of $52.80" in chosen.get_json()["messages"][-1]["text"]
    case_id = _drafted_case(approver, linen)
    [proposal] = approver.get(f"/api/cases/{case_id}").get_json()["proposals"]
    assert (proposal["kind"], proposal["amount"]["amount"]) == ("customer_credit", 5280)
    assert proposal["proposed_by"] == "system:drafter"
    # Choosing again offers nothing: the choice was made once.
    again = shopper.post("/chat/choices", {"choice": "refund"})
    assert again.status_code == 400 and again.get_json()["error"]["field"] == "choice"


def test_store_credit_for_a_customer_not_yet_linked_at_stripe_links_them_by_their_email(
    linen: LinenShop,
    shopper: Shopper,
    outbox: Outbox,
    owner: Staff,
    approver: Staff,
    session: Session,
    worker: WorkerProcess,
) -> None:
    """The shop's customer has never had a Stripe action: Caseward does not know their
    Stripe account yet. Once the shopper has proved their email, the credit is offered
    and proposed to the one Stripe customer with that email, and the link is audited."""
    maya = session.scalars(select(Customer).where(Customer.email == "maya@example.com")).one()
    maya.stripe_customer_id = None
    session.commit()
    saved = owner.put("/api/shop/policy", {"rules": {"store_credit_bonus_percent": 10}})
    assert saved.status_code == 200, saved.get_json()
    _ask_and_verify(shopper, outbox)

    offer = _shop_replies(shopper, 2)[-1]
    assert "$52.80 in store credit" in offer
    chosen = shopper.post("/chat/choices", {"choice": "store_credit"})

    assert "prepared a store credit of $52.80" in chosen.get_json()["messages"][-1]["text"]
    [proposal] = approver.get(f"/api/cases/{_drafted_case(approver, linen)}").get_json()[
        "proposals"
    ]
    assert (proposal["kind"], proposal["provider"]) == ("customer_credit", "stripe")
    assert proposal["target"] == linen.customer_id
    assert proposal["status"] == "awaiting_approval"
    session.expire_all()
    assert session.get_one(Customer, maya.id).stripe_customer_id == linen.customer_id
    [linked] = session.scalars(select(AuditEvent).where(AuditEvent.kind == "customer.linked")).all()
    assert linked.actor == "system:drafter" and "maya" not in str(linked.data).lower()


def test_a_shopper_asking_for_a_person_is_told_when_to_expect_an_answer(
    linen: LinenShop, shopper: Shopper
) -> None:
    shopper.say("I have a question about my order")

    state = shopper.post("/chat/person", {}).get_json()

    assert "usually within one business day" in state["messages"][-1]["text"]
    assert state["case"]["status"] == "with_person"


def test_a_reply_staff_type_is_held_to_what_the_provider_reported(
    linen: LinenShop, shopper: Shopper, outbox: Outbox, approver: Staff, worker: WorkerProcess
) -> None:
    _ask_and_verify(shopper, outbox)
    _shop_replies(shopper, 2)
    case_id = _drafted_case(approver, linen)

    for claim in (
        "Good news: your refund of $48.00 has been processed.",
        "I've approved a refund of $60.00 for you.",
    ):
        refused = approver.post(f"/api/cases/{case_id}/replies", {"text": claim})
        assert refused.status_code == 400, claim
        assert refused.get_json()["error"]["field"] == "text"
    kept = approver.post(
        f"/api/cases/{case_id}/replies",
        {"text": "The refund of $48.00 is with our team; we will tell you when it is done."},
    )

    assert kept.status_code == 201, kept.get_json()
    shown = [m["text"] for m in shopper.state()["messages"] if m["from"] == "shop"]
    assert shown[-1].startswith("The refund of $48.00 is with our team")
    assert not any("processed" in text or "$60.00" in text for text in shown)


def test_a_discount_on_a_replacement_offered_by_the_policy_is_proposed_when_chosen(
    linen: LinenShop,
    shopper: Shopper,
    outbox: Outbox,
    owner: Staff,
    approver: Staff,
    worker: WorkerProcess,
) -> None:
    saved = owner.put("/api/shop/policy", {"rules": {"replacement_discount": True}})
    assert saved.status_code == 200, saved.get_json()
    _ask_and_verify(shopper, outbox)

    offer = _shop_replies(shopper, 2)[-1]
    assert "discount of $48.00 on a replacement" in offer
    assert [c["id"] for c in shopper.state()["choices"]] == ["refund", "replacement_discount"]
    chosen = shopper.post("/chat/choices", {"choice": "replacement_discount"})

    assert chosen.status_code == 200, chosen.get_json()
    [proposal] = approver.get(f"/api/cases/{_drafted_case(approver, linen)}").get_json()[
        "proposals"
    ]
    assert (proposal["kind"], proposal["amount"]["amount"]) == ("discount", 4800)
    assert proposal["params"] == {"amount_off": 4800, "duration": "once"}
    assert proposal["target"] == linen.customer_id


def test_a_drafted_proposal_the_checks_block_goes_to_a_person_and_promises_nothing(
    linen: LinenShop,
    shopper: Shopper,
    outbox: Outbox,
    owner: Staff,
    approver: Staff,
    worker: WorkerProcess,
) -> None:
    engaged = owner.put("/api/shop/kill-switch", {"engaged": True})
    assert engaged.status_code == 200, engaged.get_json()
    _ask_and_verify(shopper, outbox)

    reply = _shop_replies(shopper, 2)[-1]

    # The checks blocked it: the shopper hears that a person will reply, and no amount.
    assert reply.endswith(str(with_a_person("Linen & Loom")))
    assert "$" not in reply and str(thanks()) not in reply
    assert shopper.state()["case"]["status"] == "with_person"
    case = approver.get(f"/api/cases/{_drafted_case(approver, linen)}").get_json()
    assert [p["status"] for p in case["proposals"]] == ["blocked"]
    assert case["owner"] == OWNER


DRAFTING_JOB = "app.drafting.jobs.draft_after_message"


def _queued_draft(app: Flask) -> Job:
    """The drafting job the shopper's message queued."""
    [job] = [
        job for job in RedisExtension.background_queue(app).jobs if job.func_name == DRAFTING_JOB
    ]
    return job


def test_a_message_whose_drafting_job_was_lost_is_drafted_after_the_sweep(
    app: Flask,
    linen: LinenShop,
    shopper: Shopper,
    ctx: ExecutionContext,
    queue: Queue,
    start_worker: Callable[[], WorkerProcess],
    session: Session,
) -> None:
    """The web process kept the shopper's message and died before queueing its draft (or
    Redis lost the job): the sweep queues it, once, and the shopper is answered."""
    shopper.say("Where is order #1001?")
    lost = _queued_draft(app)
    lost.delete()

    assert sweep(ctx, queue)["drafting"] == list(lost.args)
    assert sweep(ctx, queue)["drafting"] == []  # its job waits: queued once
    start_worker()
    [reply] = _shop_replies(shopper, 1)
    assert "verify" in reply
    assert sweep(ctx, queue)["drafting"] == []
    (owed,) = session.scalars(select(Message.draft_owed_since).where(Message.author == "customer"))
    assert owed is None


def test_a_message_whose_drafting_failed_is_left_for_people_not_drafted_at_every_sweep(
    app: Flask, linen: LinenShop, shopper: Shopper, ctx: ExecutionContext, queue: Queue
) -> None:
    """Each run may call the model: a failed job stays in RQ's failed jobs, where people
    see it, and the case in the staff's queue, instead of running at every sweep."""
    shopper.say("Where is order #1001?")
    job = _queued_draft(app)
    fail_as_rq_does(RedisExtension.background_queue(app), job)

    assert sweep(ctx, queue)["drafting"] == []
    assert RedisExtension.background_queue(app).jobs == []
    assert job.get_status(refresh=True) == JobStatus.FAILED


def test_a_shopper_verified_while_their_draft_is_made_is_answered_with_their_order(
    app: Flask,
    linen: LinenShop,
    shopper: Shopper,
    outbox: Outbox,
    settings: Settings,
    ctx: ExecutionContext,
    queue: Queue,
    start_worker: Callable[[], WorkerProcess],
) -> None:
    """The draft of Maya's question is being made (by the model, for seconds) when she
    verifies: that draft was made without her orders, and the job her verification asks
    for cannot start while it runs. Her question stays owed a draft, and the sweep has it
    drafted again, with her order."""
    shopper.say(ASKS)
    running = _queued_draft(app)
    # A worker took it: off the queue, started.
    RedisExtension.background_queue(app).remove(running)
    running.set_status(JobStatus.STARTED)

    class VerifiedMeanwhile:
        """The drafter, while Maya verifies through the chat."""

        def run(self, brief: Any) -> Any:
            shopper.post("/chat/verification", {"order": "#1001", "email": "maya@example.com"})
            code = newest_code(outbox, "maya@example.com")
            assert shopper.post("/chat/verification/code", {"code": code}).status_code == 200
            return drafter_for(settings).run(brief)

    outcome, _ = draft_for_message(
        ctx.session_factory,
        ctx.adapters,
        settings,
        VerifiedMeanwhile(),
        uuid.UUID(running.args[0]),
        now=utcnow(),
    )
    running.set_status(JobStatus.FINISHED)
    assert outcome.startswith("drafted")
    [unverified] = _shop_replies(shopper, 1)
    # Made without her orders, answered on the facts as they stand when it is kept: she is
    # verified by then, so she is not asked to verify again, and no amount is named yet.
    assert str(looking_into_it()) in unverified and "$48.00" not in unverified

    assert sweep(ctx, queue)["drafting"] == list(running.args)
    start_worker()
    replies = _shop_replies(shopper, 2)
    assert "$48.00" in replies[-1] and "review" in replies[-1]
    assert sweep(ctx, queue)["drafting"] == []
