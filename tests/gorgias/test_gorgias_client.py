"""The Gorgias client against the served sandbox: reads, replies and notes in Gorgias'
shapes, the request budget and 429s on injected time, exactly-once posting through lost
answers, and typed refusals."""

from __future__ import annotations

import logging
import socket
import uuid
from datetime import UTC, datetime

import pytest
from gorgias_support import MAYA, START, FakeTime, client_for, with_external_id

from integrations.gorgias import (
    AccountBudgets,
    GorgiasClient,
    GorgiasRefused,
    GorgiasUnavailable,
    PostedMessage,
)
from integrations.gorgias.sandbox import (
    DEMO_API_USER,
    ApiUser,
    DemoAccount,
    GorgiasSandbox,
    ReceivedRequest,
)

MESSAGES = "/api/tickets/*/messages"


def _reply(
    client: GorgiasClient, demo: DemoAccount, our_id: str, *, already_tried: bool = False
) -> PostedMessage:
    return client.post_reply(
        demo.ticket_id,
        body_text="So sorry about the seam. A refund for one apron is on its way.",
        our_id=our_id,
        sender_email=DEMO_API_USER,
        receiver_email=MAYA,
        already_tried=already_tried,
    )


def _posts_of(sandbox: GorgiasSandbox, our_id: str) -> list[ReceivedRequest]:
    return [r for r in sandbox.received_requests() if r.idempotency_key == our_id]


def test_reads_the_ticket_with_its_customer_and_messages(
    sandbox: GorgiasSandbox, demo: DemoAccount, fake: FakeTime
) -> None:
    ticket = client_for(sandbox, demo, fake).ticket(demo.ticket_id)
    assert ticket.id == demo.ticket_id
    assert ticket.subject == "One apron arrived torn (order #1001)"
    assert ticket.status == "open"
    assert ticket.customer is not None
    assert (ticket.customer.email, ticket.customer.name) == (MAYA, "Maya Lin")
    [first] = ticket.messages
    assert "torn seam" in first.body_text
    assert (first.from_agent, first.public, first.channel) == (False, True, "email")
    assert first.sender_email == MAYA
    assert first.created_datetime == datetime.fromtimestamp(START, UTC)


def test_a_reply_is_an_outgoing_public_message_from_the_shop(
    sandbox: GorgiasSandbox, demo: DemoAccount, fake: FakeTime
) -> None:
    posted = client_for(sandbox, demo, fake).post_reply(
        demo.ticket_id,
        body_text='Sorry! The "natural" apron is refunded.',
        our_id="caseward-reply-1",
        sender_email=DEMO_API_USER,
        receiver_email=MAYA,
    )
    assert (posted.external_id, posted.public, posted.found_by_lookup) == (
        "caseward-reply-1",
        True,
        False,
    )
    [stored] = with_external_id(sandbox, demo.ticket_id, "caseward-reply-1")
    assert stored["id"] == posted.id
    assert stored["from_agent"] is True
    assert (stored["channel"], stored["via"], stored["public"]) == ("email", "api", True)
    assert stored["body_text"] == 'Sorry! The "natural" apron is refunded.'
    assert stored["sender"]["email"] == DEMO_API_USER
    assert stored["receiver"]["email"] == MAYA
    assert stored["source"]["from"]["address"] == DEMO_API_USER
    assert [to["address"] for to in stored["source"]["to"]] == [MAYA]
    assert stored["sent_datetime"] is not None


def test_a_chat_reply_goes_out_on_chat(
    sandbox: GorgiasSandbox, demo: DemoAccount, fake: FakeTime
) -> None:
    client_for(sandbox, demo, fake).post_reply(
        demo.ticket_id,
        body_text="Hello!",
        our_id="chat-1",
        sender_email=DEMO_API_USER,
        receiver_email=MAYA,
        channel="chat",
    )
    [stored] = with_external_id(sandbox, demo.ticket_id, "chat-1")
    assert (stored["channel"], stored["source"]["type"]) == ("chat", "chat")


def test_an_internal_note_is_not_public_and_has_no_receiver(
    sandbox: GorgiasSandbox, demo: DemoAccount, fake: FakeTime
) -> None:
    posted = client_for(sandbox, demo, fake).post_internal_note(
        demo.ticket_id, body_text="Caseward drafted a $48.00 refund.", our_id="caseward-note-1"
    )
    assert (posted.channel, posted.public) == ("internal-note", False)
    [stored] = with_external_id(sandbox, demo.ticket_id, "caseward-note-1")
    assert (stored["channel"], stored["public"], stored["from_agent"]) == (
        "internal-note",
        False,
        True,
    )
    assert stored["receiver"] is None
    assert stored["sender"]["email"] == DEMO_API_USER


def test_the_40th_request_within_20_seconds_waits_for_the_budget(
    sandbox: GorgiasSandbox, demo: DemoAccount, fake: FakeTime
) -> None:
    # Gorgias allows 40; the budget keeps one as headroom (see Limit).
    client = client_for(sandbox, demo, fake)
    for _ in range(39):
        client.ticket(demo.ticket_id)
    assert fake.slept == []
    client.ticket(demo.ticket_id)
    assert fake.slept == [pytest.approx(0.5)]
    assert [r.status for r in sandbox.received_requests()] == [200] * 40


def test_every_client_of_an_account_shares_one_budget(
    sandbox: GorgiasSandbox, fake: FakeTime
) -> None:
    assert sandbox.url is not None
    # An account no other test of the process has used: its budget starts full.
    domain = sandbox.create_account(
        f"budget-{uuid.uuid4().hex[:12]}", api_users=[ApiUser("me@shop.example", "key")]
    )
    ticket_id = sandbox.open_ticket(domain, customer_email=MAYA, subject="Hi", body_text="Hi")
    # Made without a budget of their own: they draw from the process's, by account.
    first, second = (
        GorgiasClient(
            f"https://{domain}",
            "me@shop.example",
            "key",
            timeout_s=5.0,
            clock=fake.clock,
            sleep=fake.sleep,
            api_base=sandbox.url,
        )
        for _ in range(2)
    )
    for _ in range(20):
        first.ticket(ticket_id)
    for _ in range(19):
        second.ticket(ticket_id)
    assert fake.slept == []
    second.ticket(ticket_id)
    assert fake.slept == [pytest.approx(0.5)]
    assert 429 not in [r.status for r in sandbox.received_requests()]


def test_a_429_waits_as_long_as_retry_after_says(
    sandbox: GorgiasSandbox, demo: DemoAccount, fake: FakeTime
) -> None:
    sandbox.throttle(demo.domain, 7)
    ticket = client_for(sandbox, demo, fake).ticket(demo.ticket_id)
    assert ticket.id == demo.ticket_id
    assert fake.slept == [pytest.approx(7.0)]
    assert [r.status for r in sandbox.received_requests()] == [429, 200]


def test_429s_taken_again_by_another_process_are_waited_out_while_the_waits_are_short(
    sandbox: GorgiasSandbox, demo: DemoAccount, fake: FakeTime
) -> None:
    # Another worker process, with its own budget of the account, takes the room each
    # Retry-after frees: six 429s of a second each, then the request fits.
    taken = 0

    def sleep(seconds: float) -> None:
        nonlocal taken
        fake.sleep(seconds)
        if taken < 5:
            taken += 1
            sandbox.throttle(demo.domain, 1)

    sandbox.throttle(demo.domain, 1)
    assert sandbox.url is not None
    client = GorgiasClient(
        f"https://{demo.domain}",
        demo.api_user,
        demo.api_key,
        timeout_s=5.0,
        clock=fake.clock,
        sleep=sleep,
        api_base=sandbox.url,
        budgets=AccountBudgets(),
        max_rate_limit_wait_s=60.0,
    )
    posted = _reply(client, demo, "throttled-again-1")
    assert posted.external_id == "throttled-again-1"
    assert [r.status for r in sandbox.received_requests()] == [429] * 6 + [201]
    assert len(with_external_id(sandbox, demo.ticket_id, "throttled-again-1")) == 1


def test_a_429_asking_for_too_long_a_wait_is_reported_at_once(
    sandbox: GorgiasSandbox, demo: DemoAccount, fake: FakeTime
) -> None:
    sandbox.throttle(demo.domain, 120)
    client = client_for(sandbox, demo, fake, max_rate_limit_wait_s=60.0)
    with pytest.raises(GorgiasUnavailable) as raised:
        _reply(client, demo, "throttled-1")
    assert (raised.value.reason, raised.value.retry_after_s) == ("rate_limited", 120.0)
    assert raised.value.maybe_posted is False
    assert fake.slept == []
    assert with_external_id(sandbox, demo.ticket_id, "throttled-1") == []


def test_an_answer_dropped_after_gorgias_stored_the_message_is_found_not_posted_again(
    sandbox: GorgiasSandbox, demo: DemoAccount, fake: FakeTime
) -> None:
    sandbox.arm_fault("drop_after_commit", method="POST", path=MESSAGES)
    posted = _reply(client_for(sandbox, demo, fake), demo, "caseward-reply-7")
    assert posted.found_by_lookup
    [stored] = with_external_id(sandbox, demo.ticket_id, "caseward-reply-7")
    assert stored["id"] == posted.id
    assert len(_posts_of(sandbox, "caseward-reply-7")) == 1


def test_a_500_after_storing_is_found_by_its_external_id(
    sandbox: GorgiasSandbox, demo: DemoAccount, fake: FakeTime
) -> None:
    sandbox.arm_fault("error_500_after_commit", method="POST", path=MESSAGES)
    posted = client_for(sandbox, demo, fake).post_internal_note(
        demo.ticket_id, body_text="note", our_id="note-500"
    )
    assert posted.found_by_lookup
    assert len(with_external_id(sandbox, demo.ticket_id, "note-500")) == 1


def test_a_timeout_after_storing_is_found_by_its_external_id(
    sandbox: GorgiasSandbox, demo: DemoAccount, fake: FakeTime
) -> None:
    sandbox.arm_fault("delay", method="POST", path=MESSAGES, ms=1500, when="after")
    client = client_for(sandbox, demo, fake, timeout_s=0.3)
    posted = _reply(client, demo, "slow-1")
    assert posted.found_by_lookup
    assert len(with_external_id(sandbox, demo.ticket_id, "slow-1")) == 1


def test_a_connection_dropped_before_storing_is_looked_for_then_sent_again(
    sandbox: GorgiasSandbox, demo: DemoAccount, fake: FakeTime
) -> None:
    sandbox.arm_fault("drop_before_commit", method="POST", path=MESSAGES)
    posted = _reply(client_for(sandbox, demo, fake), demo, "retry-1")
    assert not posted.found_by_lookup
    assert len(with_external_id(sandbox, demo.ticket_id, "retry-1")) == 1
    answered = [(r.method, r.dropped) for r in sandbox.received_requests()]
    assert answered == [("POST", True), ("GET", False), ("POST", False)]


def test_when_every_send_is_lost_the_caller_is_told_it_may_have_landed(
    sandbox: GorgiasSandbox, demo: DemoAccount, fake: FakeTime
) -> None:
    sandbox.arm_fault("drop_before_commit", method="POST", path=MESSAGES, count=3)
    client = client_for(sandbox, demo, fake, max_sends=3)
    with pytest.raises(GorgiasUnavailable) as raised:
        _reply(client, demo, "lost-1")
    assert (raised.value.reason, raised.value.maybe_posted) == ("connection", True)
    assert len(_posts_of(sandbox, "lost-1")) == 3
    posted = _reply(client, demo, "lost-1", already_tried=True)
    assert len(with_external_id(sandbox, demo.ticket_id, "lost-1")) == 1
    assert not posted.found_by_lookup


def test_a_caller_that_already_tried_gets_the_message_without_a_second_post(
    sandbox: GorgiasSandbox, demo: DemoAccount, fake: FakeTime
) -> None:
    client = client_for(sandbox, demo, fake)
    first = _reply(client, demo, "again-1")
    again = _reply(client, demo, "again-1", already_tried=True)
    assert again.id == first.id
    assert again.found_by_lookup
    assert len(_posts_of(sandbox, "again-1")) == 1


def test_nothing_sent_is_not_reported_as_maybe_posted(demo: DemoAccount, fake: FakeTime) -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        closed_port = unused.getsockname()[1]
    client = GorgiasClient(
        f"https://{demo.domain}",
        demo.api_user,
        demo.api_key,
        timeout_s=2.0,
        clock=fake.clock,
        sleep=fake.sleep,
        api_base=f"http://127.0.0.1:{closed_port}",
        budgets=AccountBudgets(),
        max_sends=2,
    )
    with pytest.raises(GorgiasUnavailable) as raised:
        _reply(client, demo, "nowhere-1")
    assert (raised.value.reason, raised.value.maybe_posted) == ("connection", False)


def test_a_message_gorgias_refuses_is_a_typed_refusal(
    sandbox: GorgiasSandbox, demo: DemoAccount, fake: FakeTime
) -> None:
    client = client_for(sandbox, demo, fake)
    with pytest.raises(GorgiasRefused) as raised:
        client.post_reply(
            demo.ticket_id,
            body_text="Hello",
            our_id="stranger-1",
            sender_email="stranger@example.com",
            receiver_email=MAYA,
        )
    assert raised.value.status == 400
    assert "sender" in raised.value.message
    with pytest.raises(GorgiasRefused) as missing:
        client.post_internal_note(999_999, body_text="note", our_id="nowhere")
    assert missing.value.status == 404
    # A refusal is final: nothing was looked up or sent again.
    assert [r.method for r in sandbox.received_requests()] == ["POST", "POST"]


def test_the_account_read_proves_the_credentials(
    sandbox: GorgiasSandbox, demo: DemoAccount, fake: FakeTime
) -> None:
    account = client_for(sandbox, demo, fake).account()
    assert (account.domain, account.status) == ("linen-and-loom", "active")
    with pytest.raises(GorgiasRefused) as raised:
        client_for(sandbox, demo, fake, api_key="not-the-key").account()
    assert raised.value.status == 401


def test_wrong_credentials_are_refused(
    sandbox: GorgiasSandbox, demo: DemoAccount, fake: FakeTime
) -> None:
    client = client_for(sandbox, demo, fake, api_key="not-the-key")
    with pytest.raises(GorgiasRefused) as raised:
        client.ticket(demo.ticket_id)
    assert raised.value.status == 401
    with pytest.raises(GorgiasRefused):
        _reply(client, demo, "unauthorised-1")
    assert with_external_id(sandbox, demo.ticket_id, "unauthorised-1") == []


def test_neither_the_key_nor_a_body_is_logged_or_told(
    sandbox: GorgiasSandbox, demo: DemoAccount, fake: FakeTime, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    sandbox.arm_fault("drop_after_commit", method="POST", path=MESSAGES)
    client = client_for(sandbox, demo, fake)
    secret_words = "Maya's card ends in 4242"
    client.post_internal_note(demo.ticket_id, body_text=secret_words, our_id="private-1")
    with pytest.raises(GorgiasRefused) as raised:
        client.post_reply(
            demo.ticket_id,
            body_text=secret_words,
            our_id="private-2",
            sender_email="stranger@example.com",
            receiver_email=MAYA,
        )
    told = caplog.text + str(raised.value) + repr(client)
    assert "unclear" in caplog.text  # the lost answer was logged, without its words
    assert demo.api_key not in told
    assert secret_words not in told


def test_a_domain_that_is_not_a_gorgias_account_is_refused() -> None:
    with pytest.raises(ValueError, match=r"name\.gorgias\.com"):
        GorgiasClient("https://example.com", "me@example.com", "key", timeout_s=1.0)
