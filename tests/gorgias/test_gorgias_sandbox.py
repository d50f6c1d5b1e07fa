"""The Gorgias sandbox on the wire: accounts by Host, basic auth, the rate limit, Gorgias'
rules for messages, lists, HTTP integrations (rendered, escaped, turned off after 100
failures in a row) and the control routes."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from gorgias_support import MAYA, receiver, wait_until

from integrations.gorgias.sandbox import (
    CALL_LIMIT_HEADER,
    DEMO_API_USER,
    DemoAccount,
    GorgiasSandbox,
    render_body,
    render_url,
)

BODY_TEMPLATE = (
    '{"event": "ticket-message-created", "ticket_id": {{ticket.id}}, '
    '"message_id": {{message.id}}, "email": "{{ticket.customer.email}}", '
    '"text": "{{ticket.messages[-1].body_text}}", "updated": "{{ticket.updated_datetime}}"}'
)


def _api(sandbox: GorgiasSandbox, demo: DemoAccount, **overrides: Any) -> httpx.Client:
    """A plain HTTP client of the demo account, as any Gorgias API caller would be."""
    assert sandbox.url is not None
    return httpx.Client(
        base_url=sandbox.url,
        headers={"Host": overrides.pop("host", demo.domain)},
        auth=overrides.pop("auth", (demo.api_user, demo.api_key)),
        timeout=5.0,
    )


def _control(sandbox: GorgiasSandbox, token: str | None = None) -> httpx.Client:
    assert sandbox.url is not None
    return httpx.Client(
        base_url=sandbox.url,
        headers={"Authorization": f"Bearer {token or sandbox.control_token}"},
        timeout=5.0,
    )


def test_an_integration_gets_each_new_message_rendered_with_its_headers(
    sandbox: GorgiasSandbox, demo: DemoAccount
) -> None:
    with receiver() as caseward:
        sandbox.add_integration(
            demo.domain,
            url=caseward.url + "?ticket={{ticket.id}}",
            headers={"X-Caseward-Secret": "s3cret"},
            body_template=BODY_TEMPLATE,
            triggers=["ticket-message-created"],
        )
        message_id = sandbox.customer_writes(demo.ticket_id, "Any news about my apron?")
        [call] = wait_until(lambda: caseward.calls)
    assert call.headers["X-Caseward-Secret"] == "s3cret"
    assert call.headers["Content-Type"] == "application/json"
    assert call.path == f"/gorgias?ticket={demo.ticket_id}"
    assert json.loads(call.body) == {
        "event": "ticket-message-created",
        "ticket_id": demo.ticket_id,
        "message_id": message_id,
        "email": MAYA,
        "text": "Any news about my apron?",
        "updated": sandbox.ticket(demo.ticket_id)["updated_datetime"],
    }


def test_each_trigger_reaches_only_the_integrations_that_want_it(
    sandbox: GorgiasSandbox, demo: DemoAccount
) -> None:
    with receiver() as created, receiver() as updated, receiver() as messages:
        for where, trigger in (
            (created, "ticket-created"),
            (updated, "ticket-updated"),
            (messages, "ticket-message-created"),
        ):
            sandbox.add_integration(
                demo.domain,
                url=where.url,
                body_template='{"ticket": {{ticket.id}}, "status": "{{ticket.status}}"}',
                triggers=[trigger],
            )
        opened = sandbox.open_ticket(
            demo.domain, customer_email="ada@example.com", subject="Late", body_text="Where?"
        )
        sandbox.set_status(opened, "closed")
        # An agent's reply through the API is a new message too.
        with _api(sandbox, demo) as api:
            api.post(
                f"/api/tickets/{opened}/messages",
                json={
                    "channel": "email",
                    "from_agent": True,
                    "body_text": "On its way.",
                    "sender": {"email": DEMO_API_USER},
                    "receiver": {"email": "ada@example.com"},
                },
            ).raise_for_status()
        assert sandbox.wait_for_webhooks(timeout=10)
    assert [json.loads(c.body) for c in created.calls] == [{"ticket": opened, "status": "open"}]
    assert [json.loads(c.body) for c in updated.calls] == [{"ticket": opened, "status": "closed"}]
    assert [json.loads(c.body) for c in messages.calls] == [{"ticket": opened, "status": "closed"}]


def test_quotes_and_backslashes_in_a_message_keep_the_body_valid_json(
    sandbox: GorgiasSandbox, demo: DemoAccount
) -> None:
    words = 'It says "torn" \\ and {"refund": 9999}\nThanks,\tMaya </script>'
    with receiver() as caseward:
        sandbox.add_integration(
            demo.domain,
            url=caseward.url,
            body_template=BODY_TEMPLATE,
            triggers=["ticket-message-created"],
        )
        sandbox.customer_writes(demo.ticket_id, words)
        [call] = wait_until(lambda: caseward.calls)
    delivered = json.loads(call.body)
    assert delivered["text"] == words
    assert set(delivered) == {"event", "ticket_id", "message_id", "email", "text", "updated"}


def test_templates_render_paths_indices_and_missing_values() -> None:
    context = {
        "ticket": {"id": 7, "messages": [{"id": 1, "body_text": "a"}, {"id": 2, "body_text": "b"}]},
        "message": None,
    }
    assert render_body(
        "{{ticket.messages[0].id}}-{{ ticket.messages[-1].body_text }}", context
    ) == ("1-b")
    assert render_body('"{{message.id}}{{ticket.nothing}}{{ticket.messages[5].id}}"', context) == (
        '""'
    )
    assert render_url("https://x.example/t?m={{ticket.messages[-1].body_text}}&q=a b", context) == (
        "https://x.example/t?m=b&q=a b"
    )
    assert render_url("/c?e={{ticket.email}}", {"ticket": {"email": "a+b@x.com"}}) == (
        "/c?e=a%2Bb%40x.com"
    )


def test_an_integration_is_turned_off_after_100_failures_in_a_row(
    sandbox: GorgiasSandbox, demo: DemoAccount
) -> None:
    with receiver() as failing:
        # 99 failures, one success (the count starts again), then 100 failures.
        failing.statuses = [500] * 99 + [200] + [500] * 100
        integration = sandbox.add_integration(
            demo.domain, url=failing.url, body_template="{}", triggers=["ticket-message-created"]
        )
        for number in range(200):
            sandbox.customer_writes(demo.ticket_id, f"message {number}")
            if number == 99:
                assert sandbox.wait_for_webhooks(timeout=10)
                assert sandbox.integration(integration["id"])["deactivated_datetime"] is None
        assert sandbox.wait_for_webhooks(timeout=10)
        turned_off = sandbox.integration(integration["id"])
        assert turned_off["consecutive_failures"] == 100
        assert turned_off["deactivated_datetime"] is not None
        sandbox.customer_writes(demo.ticket_id, "anyone there?")
        assert sandbox.wait_for_webhooks(timeout=10)
        assert len(failing.calls) == 200


def test_the_41st_request_in_20_seconds_is_refused_until_the_bucket_drains(
    sandbox: GorgiasSandbox, demo: DemoAccount
) -> None:
    with _api(sandbox, demo) as api:
        answers = [api.get(f"/api/tickets/{demo.ticket_id}") for _ in range(40)]
        assert {a.status_code for a in answers} == {200}
        assert answers[-1].headers[CALL_LIMIT_HEADER] == "40/40"
        refused = api.get(f"/api/tickets/{demo.ticket_id}")
        assert refused.status_code == 429
        assert refused.headers["Retry-after"] == "1"
        assert refused.json() == {"error": {"msg": "Too many requests"}}
        sandbox.advance_clock(0.5)  # two a second drain away
        assert api.get(f"/api/tickets/{demo.ticket_id}").status_code == 200
        assert api.get(f"/api/tickets/{demo.ticket_id}").status_code == 429
        sandbox.advance_clock(20)
        assert api.get(f"/api/tickets/{demo.ticket_id}").headers[CALL_LIMIT_HEADER] == "1/40"


def test_accounts_are_found_by_host_and_need_their_api_users_credentials(
    sandbox: GorgiasSandbox, demo: DemoAccount
) -> None:
    path = f"/api/tickets/{demo.ticket_id}"
    with _api(sandbox, demo, host="someone-else.gorgias.com") as elsewhere:
        assert elsewhere.get(path).status_code == 404
    with _api(sandbox, demo, auth=(demo.api_user, "wrong")) as wrong:
        refused = wrong.get(path)
    assert refused.status_code == 401
    assert refused.headers["WWW-Authenticate"].startswith("Basic")
    other = sandbox.create_account("other-shop")
    sandbox.add_user(other, "me@other.example", api_key="other-key")
    # Another account's credentials do not open this account's tickets, nor its ticket.
    with _api(sandbox, demo, auth=("me@other.example", "other-key")) as foreign:
        assert foreign.get(path).status_code == 401
    with _api(sandbox, demo, host=other, auth=("me@other.example", "other-key")) as own:
        assert own.get(path).status_code == 404


@pytest.mark.parametrize(
    ("message", "field"),
    [
        ({"from_agent": False, "body_text": "hi", "sender": {"email": MAYA}}, "channel"),
        (
            {
                "channel": "email",
                "from_agent": False,
                "body_text": "hi",
                "sender": {"email": MAYA},
                "receiver": {"email": DEMO_API_USER},
            },
            "receiver",
        ),
        (
            {
                "channel": "email",
                "from_agent": True,
                "body_text": "hi",
                "sender": {"email": DEMO_API_USER},
            },
            "receiver",
        ),
        (
            {
                "channel": "email",
                "from_agent": True,
                "body_text": "hi",
                "sender": {"email": "stranger@example.com"},
                "receiver": {"email": MAYA},
            },
            "sender",
        ),
        ({"channel": "email", "from_agent": False, "sender": {"email": MAYA}}, "body_text"),
        (
            {
                "channel": "email",
                "from_agent": False,
                "body_text": "hi",
                "sender": {"email": MAYA},
                "priority": "high",
            },
            "priority",
        ),
        (
            {
                "channel": "email",
                "from_agent": False,
                "body_text": "hi",
                "sender": {"email": MAYA},
                "external_id": "x" * 256,
            },
            "external_id",
        ),
    ],
)
def test_messages_breaking_gorgias_rules_are_refused_and_store_nothing(
    sandbox: GorgiasSandbox, demo: DemoAccount, message: dict[str, Any], field: str
) -> None:
    with _api(sandbox, demo) as api:
        refused = api.post(f"/api/tickets/{demo.ticket_id}/messages", json=message)
    assert refused.status_code == 400
    assert field in refused.json()["error"]["data"]
    assert len(sandbox.ticket(demo.ticket_id)["messages"]) == 1


def test_a_ticket_created_through_the_api_starts_with_its_message(
    sandbox: GorgiasSandbox, demo: DemoAccount
) -> None:
    with _api(sandbox, demo) as api:
        created = api.post(
            "/api/tickets",
            json={
                "subject": "Wrong size",
                "messages": [
                    {
                        "channel": "email",
                        "via": "email",
                        "from_agent": False,
                        "body_text": "The apron is too small.",
                        "sender": {"email": "ada@example.com", "name": "Ada Byron"},
                    }
                ],
            },
        )
    assert created.status_code == 201
    ticket = created.json()
    assert isinstance(ticket["id"], int)
    assert ticket["uri"] == f"/api/tickets/{ticket['id']}/"
    assert (ticket["customer"]["email"], ticket["customer"]["name"]) == (
        "ada@example.com",
        "Ada Byron",
    )
    [message] = ticket["messages"]
    assert (message["from_agent"], message["public"], message["receiver"]) == (False, True, None)
    assert message["source"]["from"]["address"] == "ada@example.com"
    assert message["source"]["to"] == [{"name": None, "address": DEMO_API_USER}]


def test_a_tickets_messages_come_in_pages_walked_by_cursor(
    sandbox: GorgiasSandbox, demo: DemoAccount
) -> None:
    for number in range(4):
        sandbox.customer_writes(demo.ticket_id, f"message {number}")
    sandbox.open_ticket(demo.domain, customer_email="ada@example.com", subject="Hi", body_text="Hi")
    seen: list[str] = []
    cursor = None
    with _api(sandbox, demo) as api:
        while True:
            params: dict[str, str | int] = {"ticket_id": demo.ticket_id, "limit": 2}
            if cursor:
                params["cursor"] = cursor
            page = api.get("/api/messages", params=params).json()
            assert page["object"] == "list"
            seen += [m["body_text"] for m in page["data"]]
            cursor = page["meta"]["next_cursor"]
            if cursor is None:
                break
        of_ticket = api.get(
            f"/api/tickets/{demo.ticket_id}/messages", params={"order_by": "created_datetime:asc"}
        ).json()
        bad = api.get("/api/messages", params={"limit": 101})
    # Newest first by default; the other ticket's message is not among them.
    assert seen[:4] == ["message 3", "message 2", "message 1", "message 0"]
    assert len(seen) == 5
    assert [m["body_text"] for m in of_ticket["data"]][1:] == [f"message {n}" for n in range(4)]
    assert bad.status_code == 400


def test_control_routes_need_the_token_and_drive_the_helpdesk(sandbox: GorgiasSandbox) -> None:
    with _control(sandbox, token="not-the-token") as stranger:
        assert stranger.post("/_sandbox/accounts", json={"name": "shop"}).status_code == 401
    with receiver() as caseward, _control(sandbox) as control:
        account = control.post(
            "/_sandbox/accounts",
            json={"name": "shop", "api_users": [{"email": "me@shop.example", "api_key": "k"}]},
        ).json()
        domain = account["domain"]
        assert domain == "shop.gorgias.com"
        integration = control.post(
            f"/_sandbox/accounts/{domain}/integrations",
            json={
                "url": caseward.url,
                "method": "POST",
                "headers": {"X-Caseward-Secret": "s"},
                "body_template": '{"ticket": {{ticket.id}}, "text": "{{message.body_text}}"}',
                "triggers": ["ticket-created", "ticket-message-created"],
            },
        ).json()
        assert integration["http"]["triggers"]["ticket-created"] is True
        ticket = control.post(
            f"/_sandbox/accounts/{domain}/tickets",
            json={"customer_email": MAYA, "subject": "Torn apron", "body_text": "It is torn."},
        ).json()
        written = control.post(
            f"/_sandbox/tickets/{ticket['id']}/customer_writes", json={"body_text": "Hello?"}
        ).json()
        control.post(
            f"/_sandbox/tickets/{ticket['id']}/agent_writes",
            json={"body_text": "Looking into it.", "internal": True},
        ).raise_for_status()
        assert sandbox.wait_for_webhooks(timeout=10)
        shown = control.get(f"/_sandbox/tickets/{ticket['id']}").json()
        bad = control.post(
            f"/_sandbox/accounts/{domain}/integrations",
            json={"url": caseward.url, "triggers": ["ticket-deleted"]},
        )
    assert [json.loads(c.body) for c in caseward.calls] == [
        {"ticket": ticket["id"], "text": "It is torn."},
        {"ticket": ticket["id"], "text": "Hello?"},
        {"ticket": ticket["id"], "text": "Looking into it."},
    ]
    assert shown["messages"][1]["id"] == written["message_id"]
    assert shown["messages"][2]["channel"] == "internal-note"
    assert bad.status_code == 400
