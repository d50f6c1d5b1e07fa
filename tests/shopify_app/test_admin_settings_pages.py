"""The embedded admin's settings and audit pages.

Every member sees how the shop is set (connections, protection mode, kill switch, policy,
their own role and limits); owners get the controls, and every change goes through the
JSON API, which refuses anyone else and puts each change on the audit trail. The audit
page verifies the shop's chain on every visit and lets owners export it, as JSON Lines
that ``flask audit-verify`` checks, or as CSV.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from admin_pages_support import APPROVER, OWNER, VIEWER, a_shop, api, open_page, text_of
from audit_tampering import cut_tail
from flask.testing import FlaskClient, FlaskCliRunner
from helpdesk_support import connect_gorgias
from sqlalchemy import select
from sqlalchemy.orm import Session

from app import audit
from app.actors import Surface, staff
from app.agents.models import AgentTool
from app.audit import AuditEvent
from app.settings import Settings
from app.shops.models import Shop, StaffMember
from app.shops.service import current_policy
from integrations.provider import ActionKind


@pytest.fixture
def linen(session: Session, settings: Settings) -> Shop:
    return a_shop(session, settings, "linen")


def forms_of(page: str) -> list[str]:
    """Each form's id or class, as the page's scripts find them."""
    return re.findall(r'<form (?:id|class)="([\w-]+)"', page)


def switch(page: str, url: str) -> dict[str, Any]:
    """The switch form for ``url``: what its script sends, and where."""
    form = re.search(
        rf'<form class="switch" data-method="(\w+)" data-url="({re.escape(url)})"\s+'
        r"data-body='([^']+)'",
        page,
    )
    assert form is not None, f"no control for {url}"
    return {"method": form[1], "url": form[2], "body": json.loads(form[3])}


def events_of(session: Session, shop: Shop, kind: str) -> list[AuditEvent]:
    return list(
        session.scalars(
            select(AuditEvent)
            .where(AuditEvent.shop_id == shop.id, AuditEvent.kind == kind)
            .order_by(AuditEvent.seq)
        )
    )


# ------------------------------------------------------------------ settings


@pytest.mark.parametrize(
    ("user", "controls"),
    [
        (
            OWNER,
            ["stripe-key", "gorgias", "switch", "switch", "brakes", "slack"]
            + ["staff-member"] * 3
            + ["agent-issue"],
        ),
        (APPROVER, ["switch"]),  # any approver may stop everything
        (VIEWER, []),
    ],
)
def test_everyone_sees_the_settings_and_only_owners_get_the_controls(
    client: FlaskClient, linen: Shop, user: str, controls: list[str]
) -> None:
    page = text_of(open_page(client, linen, user, "/app/settings"))

    assert forms_of(page) == controls
    assert "Writes are on" in page and "Off" in page
    assert "Discounts may take at most 50% off." in page
    assert "Installed" in page and "read_orders,write_orders" in page
    if user != OWNER:
        assert "Only owners see the whole staff list." in page
        assert 'data-user="1001"' not in page  # nobody else's role or email
        assert "Only owners see and issue agent credentials." in page


def test_an_owners_changes_through_the_pages_controls_are_made_and_audited(
    client: FlaskClient, session: Session, linen: Shop
) -> None:
    page = text_of(open_page(client, linen, OWNER, "/app/settings"))
    writes = switch(page, "/api/shop/writes")
    rules = current_policy(session, linen.id).to_dict()
    del rules["version"]  # the server numbers versions
    rules["max_percent_off"] = 30

    answers = [
        api(client, linen, OWNER, writes["method"], writes["url"], writes["body"]),
        api(client, linen, OWNER, "PUT", "/api/shop/policy", {"rules": rules}),
        api(
            client,
            linen,
            OWNER,
            "PUT",
            f"/api/staff/{APPROVER}",
            {"role": "approver", "approval_limits": {"usd": 48000, "jpy": 5000}},
        ),
    ]

    assert [answer.status_code for answer in answers] == [200, 200, 200]
    session.refresh(linen)
    assert linen.writes_enabled is False
    for kind in ("shop.writes_disabled", "policy.changed", "staff.changed"):
        (event,) = events_of(session, linen, kind)
        assert (event.actor, event.actor_surface) == (OWNER, "shopify_admin")
    after = text_of(open_page(client, linen, OWNER, "/app/settings"))
    assert "Discounts may take at most 30% off." in after and "Version 2." in after
    assert 'value="JPY 5000, USD 480.00"' in after
    assert "Read-only" in after and "Turn writes on" in after


def test_an_owner_has_helpdesk_cases_drafted_only_on_request_from_the_settings_page(
    client: FlaskClient, session: Session, linen: Shop, settings: Settings
) -> None:
    connect_gorgias(session, linen, settings, owner=OWNER, account="linen-settings")
    session.commit()
    page = text_of(open_page(client, linen, OWNER, "/app/settings"))
    assert "drafted into an internal note as the customer writes" in page
    prepare = switch(page, "/api/shop/connections/gorgias/prepare-on-arrival")
    assert prepare["body"] == {"enabled": False}

    answer = api(client, linen, OWNER, prepare["method"], prepare["url"], prepare["body"])

    assert answer.status_code == 200
    (event,) = events_of(session, linen, "connection.prepare_on_arrival_off")
    assert (event.actor, event.actor_surface) == (OWNER, "shopify_admin")
    after = text_of(open_page(client, linen, OWNER, "/app/settings"))
    assert "drafted only when an agent applies the prepare case macro" in after
    assert switch(after, prepare["url"])["body"] == {"enabled": True}
    approver_page = text_of(open_page(client, linen, APPROVER, "/app/settings"))
    assert "drafted only when an agent applies" in approver_page
    with pytest.raises(AssertionError):
        switch(approver_page, prepare["url"])


@pytest.mark.parametrize("user", [APPROVER, VIEWER])
def test_everyone_but_an_owner_is_refused_each_change_and_nothing_changes(
    client: FlaskClient, session: Session, linen: Shop, user: str
) -> None:
    changes = [
        ("PUT", "/api/shop/writes", {"enabled": False}),
        ("PUT", "/api/shop/policy", {"rules": {"max_percent_off": 100}}),
        ("PUT", f"/api/staff/{user}", {"role": "owner"}),
        ("POST", "/api/shop/connections/stripe/test", {"api_key": "rk_test_x", "livemode": False}),
    ]

    answers = [api(client, linen, user, method, url, body) for method, url, body in changes]

    assert [answer.status_code for answer in answers] == [403, 403, 403, 403]
    session.refresh(linen)
    assert linen.writes_enabled is True
    member = session.scalars(select(StaffMember).where(StaffMember.user_id == user)).one()
    assert member.role != "owner"
    assert events_of(session, linen, "policy.changed") == []
    refused = events_of(session, linen, "request.refused")
    assert len(refused) == 4 and {event.actor for event in refused} == {user}


def test_an_approver_may_stop_everything_and_only_an_owner_starts_it_again(
    client: FlaskClient, session: Session, linen: Shop
) -> None:
    page = text_of(open_page(client, linen, APPROVER, "/app/settings"))
    stop = switch(page, "/api/shop/kill-switch")
    assert stop["body"] == {"engaged": True}

    stopped = api(client, linen, APPROVER, stop["method"], stop["url"], stop["body"])
    release_page = text_of(open_page(client, linen, APPROVER, "/app/settings"))
    refused = api(client, linen, APPROVER, "PUT", stop["url"], {"engaged": False})
    owner_page = text_of(open_page(client, linen, OWNER, "/app/settings"))
    release = switch(owner_page, "/api/shop/kill-switch")
    released = api(client, linen, OWNER, release["method"], release["url"], release["body"])

    assert (stopped.status_code, refused.status_code, released.status_code) == (200, 403, 200)
    assert forms_of(release_page) == []  # the approver gets no control to start it again
    assert release["body"] == {"engaged": False}
    assert [e.actor for e in events_of(session, linen, "shop.kill_switch_engaged")] == [APPROVER]
    assert [e.actor for e in events_of(session, linen, "shop.kill_switch_released")] == [OWNER]


# ------------------------------------------------------------------ agents


def agent_form(page: str) -> dict[str, Any]:
    """What the agent form offers, and where its script sends it."""
    form = re.search(r'<form class="agent-issue" data-url="([^"]+)"(.*?)</form>', page, re.S)
    assert form is not None, "no form to issue an agent credential"
    boxes = re.findall(r'name="(allowed_kinds|allowed_tools)" value="(\w+)"( checked)?', form[2])
    return {
        "url": form[1],
        "kinds": [value for name, value, _ in boxes if name == "allowed_kinds"],
        "tools": [value for name, value, _ in boxes if name == "allowed_tools"],
        "checked": [value for _, value, checked in boxes if checked],
    }


def test_an_owner_issues_sees_and_revokes_agent_credentials_from_the_settings_page(
    client: FlaskClient, session: Session, linen: Shop
) -> None:
    form = agent_form(text_of(open_page(client, linen, OWNER, "/app/settings")))
    assert form["kinds"] == [kind.value for kind in ActionKind]
    assert form["tools"] == [tool.value for tool in AgentTool]
    assert form["checked"] == ["refund", *form["tools"]]  # refunds only, every tool

    # What the page's script sends: the boxes ticked, "USD 50.00" in minor units.
    issued = api(
        client,
        linen,
        OWNER,
        "POST",
        form["url"],
        {
            "name": "Claude",
            "allowed_kinds": ["refund", "customer_credit"],
            "allowed_tools": ["find_case", "read_case", "propose_action"],
            "ceiling": {"usd": 5000},
        },
    )
    assert issued.status_code == 201
    secret = issued.get_json()["secret"]
    listed = text_of(open_page(client, linen, OWNER, "/app/settings"))
    row = re.search(r'<tr data-agent="([^"]+)">(.*?)</tr>', listed, re.S)
    assert row is not None
    words = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", row[2]))
    assert "Claude" in words and secret[:12] in words and secret not in listed
    assert "customer credit, refund" in words
    assert "find_case, propose_action, read_case" in words
    assert "$50.00" in words and "never" in words
    assert forms_of(listed)[-2:] == ["agent-revoke", "agent-issue"]

    revoke = re.search(r'<form class="agent-revoke" data-url="([^"]+)"', row[2])
    assert revoke is not None
    assert api(client, linen, OWNER, "DELETE", revoke[1], None).status_code == 200
    after = text_of(open_page(client, linen, OWNER, "/app/settings"))
    assert "Revoked on" in after and "agent-revoke" not in forms_of(after)
    kinds = [event.kind for event in events_of(session, linen, "agent.credential_issued")]
    kinds += [event.kind for event in events_of(session, linen, "agent.credential_revoked")]
    assert kinds == ["agent.credential_issued", "agent.credential_revoked"]


# ------------------------------------------------------------------ the audit log


def record(session: Session, shop: Shop, count: int, actor: str = OWNER) -> None:
    for n in range(count):
        audit.record(
            session,
            shop_id=shop.id,
            kind="policy.changed",
            actor=staff(actor, Surface.SHOPIFY_ADMIN),
            data={"n": n},
        )
    session.commit()


def rows_of(page: str) -> list[int]:
    return [int(seq) for seq in re.findall(r'<tr data-seq="(\d+)">', page)]


def test_the_audit_log_pages_newest_first_and_shows_the_chain_verified(
    client: FlaskClient, session: Session, linen: Shop
) -> None:
    record(session, linen, 60)

    first = text_of(open_page(client, linen, VIEWER, "/app/audit"))
    older = re.search(r'href="(/app/audit\?[^"]*before=(\d+)[^"]*)"', first)
    assert older is not None
    second = text_of(open_page(client, linen, VIEWER, "/app/audit", before=older[2]))

    assert "The chain holds: 60 events" in first
    assert rows_of(first) == list(range(60, 10, -1))
    assert rows_of(second) == list(range(10, 0, -1))
    assert "Older events" not in second
    assert "No signed checkpoint has been kept yet" in first
    assert 'class="export"' not in first  # a viewer cannot export


def test_the_audit_log_shows_events_removed_since_an_export(
    client: FlaskClient, session: Session, linen: Shop
) -> None:
    record(session, linen, 3)
    assert (
        api(client, linen, OWNER, "GET", "/api/audit/export?format=json", None).status_code == 200
    )

    before = text_of(open_page(client, linen, OWNER, "/app/audit"))
    cut_tail(session, linen.id, keep=1)
    after = text_of(open_page(client, linen, OWNER, "/app/audit"))

    assert "The chain holds: 3 events" in before and "holds the signed checkpoint" in before
    assert "The chain is broken at event 2: events after 1 were removed" in after


def test_an_owner_exports_json_lines_that_audit_verify_accepts(
    client: FlaskClient,
    session: Session,
    linen: Shop,
    runner: FlaskCliRunner,
    tmp_path: Path,
) -> None:
    record(session, linen, 3)
    page = text_of(open_page(client, linen, OWNER, "/app/audit"))
    url = re.search(r'class="export" data-url="([^"]+format=json)"', page)
    assert url is not None

    answer = api(client, linen, OWNER, "GET", url[1], None)

    assert answer.status_code == 200 and answer.mimetype == "application/x-ndjson"
    assert "attachment" in answer.headers["Content-Disposition"]
    *events, signed = [json.loads(line) for line in answer.get_data(as_text=True).splitlines()]
    assert [(e["seq"], e["kind"], e["data"]) for e in events] == [
        (n + 1, "policy.changed", {"n": n}) for n in range(3)
    ]
    assert signed["checkpoint"]["seq"] == 3
    exported = tmp_path / "linen.jsonl"
    exported.write_bytes(answer.get_data())
    verified = runner.invoke(
        args=["audit-verify", "--shop", linen.domain, "--checkpoint", str(exported)]
    )
    assert verified.exit_code == 0, verified.output


def test_an_owner_exports_csv_a_spreadsheet_reads_as_text(
    client: FlaskClient, session: Session, linen: Shop
) -> None:
    record(session, linen, 1)
    record(session, linen, 1, actor="=HYPERLINK(1)")  # what someone's id could hold

    answer = api(client, linen, OWNER, "GET", "/api/audit/export?format=csv", None)

    assert answer.status_code == 200 and answer.mimetype == "text/csv"
    header, *rows = list(csv.reader(io.StringIO(answer.get_data(as_text=True))))
    assert header[:4] == ["seq", "created_at", "kind", "actor"]
    assert [(row[0], row[2], row[3]) for row in rows] == [
        ("1", "policy.changed", OWNER),
        ("2", "policy.changed", "'=HYPERLINK(1)"),
    ]
    assert json.loads(rows[0][header.index("data")]) == {"n": 0}


@pytest.mark.parametrize("user", [APPROVER, VIEWER])
def test_only_owners_export_and_only_their_own_shop(
    client: FlaskClient, session: Session, settings: Settings, linen: Shop, user: str
) -> None:
    record(session, linen, 2)
    cotton = a_shop(session, settings, "cotton")
    record(session, cotton, 1)

    refused = api(client, linen, user, "GET", "/api/audit/export?format=csv", None)
    cottons = api(client, cotton, OWNER, "GET", "/api/audit/export?format=json", None)

    assert refused.status_code == 403
    *events, _signed = [json.loads(line) for line in cottons.get_data(as_text=True).splitlines()]
    assert {event["shop_id"] for event in events} == {str(cotton.id)}
    assert len(events) == 1


def test_an_unknown_export_format_is_refused_naming_the_field(
    client: FlaskClient, linen: Shop
) -> None:
    answer = api(client, linen, OWNER, "GET", "/api/audit/export?format=xml", None)

    assert answer.status_code == 400
    assert answer.get_json()["error"]["field"] == "format"
