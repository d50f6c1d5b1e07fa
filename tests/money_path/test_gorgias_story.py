"""A Gorgias ticket from its first message to a refund the provider confirmed, through the
Gorgias sandbox's HTTP integration, the agents' macros, a worker process and the Stripe
sandbox: the case is prepared as the customer writes and approved with one macro, the
customer gets exactly one status reply, and an agent above their approval limit approves
nothing. A call whose work fails is run again by itself, and prepares a case its first run
could not. An owner who turns preparing on arrival off has cases drafted only by the macro."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from flask.testing import FlaskClient
from money_path_harness import Account, Staff, WorkerProcess, wait_for
from rq import Queue
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.actors import DRAFTER
from app.audit import AuditEvent
from app.background import sweep
from app.cases.proposals import Proposal
from app.clock import utcnow
from app.conversations.models import Channel
from app.conversations.service import add_reply, start_conversation
from app.crypto import secret_box
from app.demo import SHOP_DOMAIN, LinenShop, connect_demo_helpdesk
from app.execution.executor import ExecutionContext
from app.execution.models import Action
from app.helpdesk.connection import gorgias_connection
from app.helpdesk.events import CALL_TRIGGERS, call_body_template
from app.helpdesk.jobs import HELPDESK
from app.settings import Settings
from app.shops.models import StaffMember
from integrations.gorgias.sandbox import ApiUser, GorgiasSandbox, seed_demo_account
from integrations.sandbox_kit import Fault

API_USER, API_KEY = "support@linen-and-loom.example", "gorgias-story-api-key-0123456789"
APPROVER_EMAIL = f"sam.approver@{SHOP_DOMAIN}"
PROPOSER_EMAIL = f"pat.proposer@{SHOP_DOMAIN}"
# An agent of the helpdesk who is no member of Caseward's staff.
STRANGER = "temp@agency.example"


@pytest.fixture(scope="module")
def gorgias() -> Iterator[GorgiasSandbox]:
    box = GorgiasSandbox(integration_retry_delays=(0.2, 0.5), integration_timeout=30.0)
    box.start()
    yield box
    box.stop()


@pytest.fixture
def settings(settings: Settings, gorgias: GorgiasSandbox) -> Settings:
    assert gorgias.url is not None
    return replace(settings, gorgias_api_base=gorgias.url)


@pytest.fixture
def helpdesk(
    gorgias: GorgiasSandbox, linen: LinenShop, owner: Staff, web_url: str, session: Session
) -> str:
    """The linen shop's Gorgias account, connected to Caseward as the README says, with
    its HTTP integration calling the app; returns the account's domain."""
    # An account of the test's own: the sandbox's rate limit counts per account.
    name = f"linen-{uuid.uuid4().hex[:8]}"
    domain = gorgias.create_account(name, api_users=[ApiUser(API_USER, API_KEY, "Support")])
    for email in (APPROVER_EMAIL, PROPOSER_EMAIL, STRANGER):
        gorgias.add_user(domain, email)
    connected = owner.put(
        "/api/shop/connections/gorgias",
        {"domain": name, "username": API_USER, "api_key": API_KEY},
    )
    assert connected.status_code == 200, connected.get_json()
    answer = connected.get_json()
    for trigger in CALL_TRIGGERS:  # as docs/gorgias.md sets it up
        gorgias.add_integration(
            domain,
            url=answer["events_url"].replace("http://localhost", web_url),
            body_template=call_body_template(trigger),
            triggers=[trigger],
            headers={"X-Caseward-Secret": answer["integration_secret"]},
        )
    return domain


def test_credentials_gorgias_refuses_are_named_and_nothing_is_saved(
    gorgias: GorgiasSandbox, linen: LinenShop, owner: Staff, session: Session
) -> None:
    """The owner's save reads the account once at Gorgias: a key Gorgias refuses is a 400
    naming ``api_key``, and the shop keeps no connection."""
    name = f"linen-{uuid.uuid4().hex[:8]}"
    gorgias.create_account(name, api_users=[ApiUser(API_USER, API_KEY, "Support")])

    refused = owner.put(
        "/api/shop/connections/gorgias",
        {"domain": name, "username": API_USER, "api_key": "not-the-key-0123456789"},
    )

    assert refused.status_code == 400, refused.get_json()
    error = refused.get_json()["error"]
    assert error["field"] == "api_key" and "Gorgias refused these credentials" in error["message"]
    session.expire_all()
    assert gorgias_connection(session, linen.shop_id) is None


def _messages(gorgias: GorgiasSandbox, ticket_id: int) -> list[dict[str, Any]]:
    return list(gorgias.ticket(ticket_id)["messages"])


def _notes(gorgias: GorgiasSandbox, ticket_id: int) -> list[str]:
    return [m["body_text"] for m in _messages(gorgias, ticket_id) if not m["public"]]


def _open(gorgias: GorgiasSandbox, domain: str) -> int:
    return gorgias.open_ticket(
        domain,
        customer_email="maya@example.com",
        subject="Torn apron",
        body_text="Hi, one of the two linen aprons from order #1001 arrived torn. Refund?",
    )


def test_a_ticket_ends_in_one_confirmed_refund_and_one_status_reply(
    gorgias: GorgiasSandbox,
    helpdesk: str,
    approver: Staff,
    account: Account,
    linen: LinenShop,
    worker: WorkerProcess,
) -> None:
    ticket_id = _open(gorgias, helpdesk)
    gorgias.customer_writes(ticket_id, "It is the one with the torn seam, the other is fine.")

    # The case is prepared as the customer writes: the agent opens a ticket whose case
    # waits in an internal note, and approves with one macro.
    note = wait_for(
        lambda: next(
            (n for n in _notes(gorgias, ticket_id) if "refund of $48.00" in n),
            None,
        ),
        what="Caseward's internal note with the draft",
        timeout=60,
    )
    assert note.startswith("Caseward drafted") and "awaiting_approval" in note
    assert "Suggested reply" in note
    customer_visible = [m for m in _messages(gorgias, ticket_id) if m["public"] and m["from_agent"]]
    assert customer_visible == []  # preparing a case tells the customer nothing

    gorgias.agent_writes(ticket_id, "caseward: approve", internal=True, user_email=APPROVER_EMAIL)
    refunds = wait_for(
        lambda: (
            list(
                account.stripe.v1.refunds.list(
                    params={"payment_intent": linen.payment_intent_id}
                ).data
            )
            and [
                r
                for r in account.stripe.v1.refunds.list(
                    params={"payment_intent": linen.payment_intent_id}
                ).data
                if r.status == "succeeded"
            ]
        ),
        what="the refund to succeed at Stripe",
        timeout=60,
    )
    assert [(r.amount, r.status) for r in refunds] == [(4800, "succeeded")]

    # The provider's word reached the case; the next call of the ticket posts the update
    # Caseward kept for the customer (the sweeper would too), and "send status" finds it
    # already said: the customer hears it once, however often an agent asks.
    for asked in (1, 2):
        gorgias.agent_writes(
            ticket_id, "caseward: send status", internal=True, user_email=PROPOSER_EMAIL
        )
        wait_for(
            lambda asked=asked: (
                sum("already told" in n for n in _notes(gorgias, ticket_id)) == asked
            ),
            what="the note that the customer was told",
            timeout=60,
        )
    public = [m for m in _messages(gorgias, ticket_id) if m["public"] and m["from_agent"]]
    assert [m["body_text"] for m in public] == [
        "Your refund of $48.00 has been made to your original payment method. Depending on "
        "your bank it can take 5 to 10 business days to show."
    ]
    assert public[0]["external_id"].startswith("caseward-message-")


def test_an_agent_above_their_limit_approves_nothing(
    gorgias: GorgiasSandbox,
    helpdesk: str,
    owner: Staff,
    session: Session,
    linen: LinenShop,
    worker: WorkerProcess,
) -> None:
    member = session.scalars(select(StaffMember).where(StaffMember.user_id == "sam.approver")).one()
    member.approval_limits = {"usd": 1000}  # $10.00: below the $48.00 refund
    session.commit()
    ticket_id = _open(gorgias, helpdesk)
    wait_for(
        lambda: any(n.startswith("Caseward drafted") for n in _notes(gorgias, ticket_id)),
        what="the note of the case prepared as the ticket opened",
        timeout=60,
    )

    gorgias.agent_writes(ticket_id, "caseward: approve", internal=True, user_email=APPROVER_EMAIL)
    gorgias.agent_writes(ticket_id, "caseward: approve", internal=True, user_email=STRANGER)

    def refusals() -> list[str] | None:
        found = [
            n
            for n in _notes(gorgias, ticket_id)
            if n.startswith("Not approved") or "nothing was approved" in n
        ]
        return found if len(found) == 2 else None

    refused = wait_for(refusals, what="both refusals as notes", timeout=60)
    assert any(n.startswith("Not approved") and "may approve up to $10.00" in n for n in refused)
    assert any(n.startswith(f"{STRANGER} is not a member of staff") for n in refused)
    session.expire_all()
    assert session.scalars(select(Action)).all() == []


def test_notes_a_run_made_go_to_gorgias_without_a_look_up_first(
    gorgias: GorgiasSandbox, helpdesk: str, worker: WorkerProcess
) -> None:
    """Gorgias allows an account 40 requests each 20 s, shared by all its tickets. A note
    the call's own run made (the case prepared, a macro's answer) was posted by no run
    before: it goes in one request, without listing the ticket's messages for it first."""
    ticket_id = _open(gorgias, helpdesk)
    wait_for(
        lambda: any(n.startswith("Caseward drafted") for n in _notes(gorgias, ticket_id)),
        what="the note of the case prepared as the ticket opened",
        timeout=60,
    )
    gorgias.agent_writes(
        ticket_id, "caseward: send status", internal=True, user_email=PROPOSER_EMAIL
    )

    def ours() -> list[dict[str, Any]]:
        return [
            m
            for m in _messages(gorgias, ticket_id)
            if (m["external_id"] or "").startswith("caseward-")
        ]

    wait_for(lambda: len(ours()) == 2, what="the macro's answer as a note", timeout=60)
    sent = [(r.method, r.path, r.status) for r in gorgias.received_requests(helpdesk)]
    assert [r for r in sent if r[0] == "POST"] == [
        ("POST", f"/api/tickets/{ticket_id}/messages", 201)
    ] * 2
    assert [r for r in sent if r[1].startswith("/api/messages")] == []
    assert all(not m["public"] for m in ours())


def _prepared_once_despite(gorgias: GorgiasSandbox, domain: str, fault: Fault) -> str:
    """Open a ticket with ``fault`` armed for its account; returns the one note that
    prepared its case, once the call has run again past the fault."""
    gorgias.faults.arm(fault)
    ticket_id = _open(gorgias, domain)  # one call: the ticket opened
    wait_for(
        lambda: any(n.startswith("Caseward drafted") for n in _notes(gorgias, ticket_id)),
        what="the note of the case prepared when the call ran again",
        timeout=60,
    )
    assert gorgias.armed_faults() == []  # the first run met the fault
    prepared = [n for n in _notes(gorgias, ticket_id) if n.startswith("Caseward drafted")]
    assert len(prepared) == 1
    return prepared[0]


def test_a_call_whose_ticket_read_failed_is_worked_again_by_itself(
    gorgias: GorgiasSandbox, helpdesk: str, worker: WorkerProcess
) -> None:
    """Gorgias answers the call's read of the ticket with a 500 (a blip): the call was kept
    and answered, its job fails, and RQ runs it again (``CALL_RETRY``, 5 s later), which
    prepares the case as if nothing had happened. Nobody had to ask."""
    read_fails = Fault(
        "error_500_before_commit", method="GET", path="/api/tickets/*", account=helpdesk
    )

    note = _prepared_once_despite(gorgias, helpdesk, read_fails)

    assert "Proposal: refund of $48.00 (awaiting_approval" in note


def test_a_case_whose_note_failed_is_prepared_when_the_call_runs_again(
    gorgias: GorgiasSandbox, helpdesk: str, worker: WorkerProcess, session: Session
) -> None:
    """The call's first run keeps the customer's message and drafts its case, then Gorgias
    refuses every send of the note: the run fails having kept the message. Run again, the
    call finds its message kept and no note of ours preparing it, and posts one showing the
    one proposal the first run drafted."""
    note_fails = Fault(
        "error_500_before_commit",
        method="POST",
        path="/api/tickets/*/messages",
        account=helpdesk,
        count=3,  # every send the Gorgias client makes of one note
    )

    note = _prepared_once_despite(gorgias, helpdesk, note_fails)

    # The drafter proposed nothing beside the first run's proposal; the note shows that one.
    assert "already waits for a person" in note
    assert "Proposal: refund of $48.00 (awaiting_approval" in note
    assert "Approve or reject it in Caseward: https://" in note
    drafted = session.scalars(select(Proposal).where(Proposal.proposed_by == DRAFTER.ref)).all()
    assert [(p.kind, p.amount, p.status) for p in drafted] == [
        ("refund", 4800, "awaiting_approval")
    ]


def test_an_approval_whose_note_failed_is_told_to_the_agents_when_the_call_runs_again(
    gorgias: GorgiasSandbox,
    helpdesk: str,
    account: Account,
    linen: LinenShop,
    session: Session,
    worker: WorkerProcess,
) -> None:
    """The macro's run approves, then Gorgias refuses every send of the note saying so: the
    run fails with the command done. Run again, the call posts the note it kept, once, and
    queues the action; nothing is approved twice."""
    ticket_id = _open(gorgias, helpdesk)
    wait_for(
        lambda: any(n.startswith("Caseward drafted") for n in _notes(gorgias, ticket_id)),
        what="the note of the case prepared as the ticket opened",
        timeout=60,
    )
    gorgias.faults.arm(
        Fault(
            "error_500_before_commit",
            method="POST",
            path="/api/tickets/*/messages",
            account=helpdesk,
            count=3,  # every send the Gorgias client makes of one note
        )
    )

    gorgias.agent_writes(ticket_id, "caseward: approve", internal=True, user_email=APPROVER_EMAIL)

    told = wait_for(
        lambda: [n for n in _notes(gorgias, ticket_id) if n.startswith("Approved by")] or None,
        what="the note of the approval, when the call ran again",
        timeout=60,
    )
    assert gorgias.armed_faults() == []  # the first run met the fault
    assert told == ["Approved by sam.approver: the action is queued and will be sent once."]
    refunds = wait_for(
        lambda: [
            r
            for r in account.stripe.v1.refunds.list(
                params={"payment_intent": linen.payment_intent_id}
            ).data
            if r.status == "succeeded"
        ],
        what="the approved refund to succeed at Stripe",
        timeout=60,
    )
    assert [r.amount for r in refunds] == [4800]
    assert len(session.scalars(select(Action)).all()) == 1


def test_with_preparing_on_arrival_off_only_the_macro_drafts_the_case(
    gorgias: GorgiasSandbox,
    helpdesk: str,
    owner: Staff,
    approver: Staff,
    session: Session,
    worker: WorkerProcess,
) -> None:
    path = "/api/shop/connections/gorgias/prepare-on-arrival"
    refused = approver.put(path, {"enabled": False})
    assert refused.status_code == 403
    wrong = owner.put(path, {"enabled": "no"})
    assert wrong.status_code == 400 and wrong.get_json()["error"]["field"] == "enabled"
    turned = owner.put(path, {"enabled": False})
    assert turned.status_code == 200 and turned.get_json()["prepare_on_arrival"] is False
    assert turned.get_json()["integration_secret"] is None
    assert session.scalars(
        select(AuditEvent.kind).where(AuditEvent.kind.startswith("connection.prepare"))
    ).all() == ["connection.prepare_on_arrival_off"]

    ticket_id = _open(gorgias, helpdesk)
    gorgias.agent_writes(
        ticket_id, "caseward: prepare case", internal=True, user_email=PROPOSER_EMAIL
    )
    wait_for(
        lambda: any(n.startswith("Caseward drafted") for n in _notes(gorgias, ticket_id)),
        what="the draft note the macro asked for",
        timeout=60,
    )
    # One worker works the calls in order: the ticket's first call was worked before the
    # macro's, and drafted nothing.
    drafted = [n for n in _notes(gorgias, ticket_id) if n.startswith("Caseward drafted")]
    assert len(drafted) == 1


def test_the_sweeper_queues_the_replies_waiting_for_a_ticket(
    linen: LinenShop, ctx: ExecutionContext, queue: Queue, session: Session, settings: Settings
) -> None:
    ticket = start_conversation(
        session,
        shop_id=linen.shop_id,
        channel=Channel.HELPDESK,
        channel_ref="gorgias:77",
        actor=HELPDESK,
        now=utcnow(),
    )
    add_reply(
        session,
        conversation=ticket,
        body="Your refund was submitted to the payment provider.",
        sentence=None,
        actor=HELPDESK,
        now=utcnow(),
    )
    session.commit()

    report = sweep(ctx, queue)

    assert report["delivering"] == [str(linen.shop_id)]
    background = Queue(settings.background_queue_name, connection=queue.connection)
    assert background.job_ids == [f"deliver-{linen.shop_id}"]
    assert sweep(ctx, queue)["delivering"] == []  # queued once while it waits


def test_the_demo_connects_its_helpdesk_and_the_ticket_arrives(
    gorgias: GorgiasSandbox,
    linen: LinenShop,
    settings: Settings,
    session: Session,
    client: FlaskClient,
    web_url: str,
    worker: WorkerProcess,
) -> None:
    seed_demo_account(gorgias)

    link = connect_demo_helpdesk(
        session,
        settings=settings,
        box=secret_box(settings),
        web=web_url,
        control_token=gorgias.control_token,
    )

    path = link.removeprefix(web_url)
    page = wait_for(
        lambda: (html := client.get(path).get_data(as_text=True)) and "medium" in html and html,
        what="the ticket to arrive as a conversation",
        timeout=60,
    )
    assert "maya@example.com" in page and "#1001" in page
