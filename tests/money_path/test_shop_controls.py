"""Shop-wide controls through the staff API: protection mode, the kill switch, provider
keys, and one shop never seeing another's cases.

Real database, Redis, an ``rq worker`` process and the Stripe sandbox over HTTP. What
reached the provider is read back at the sandbox: its refunds and events, and the
requests it served (recorded, not altered).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pytest
import stripe
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from money_path_harness import Account, Staff, WorkerProcess, wait_for
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.actors import Surface, staff
from app.audit import AuditEvent
from app.cases.models import Customer, Order
from app.cases.service import open_case
from app.clock import utcnow
from app.connections.models import Connection
from app.connections.service import save_stripe_connection
from app.crypto import secret_box
from app.demo import APPROVER, OWNER, SHOP_DOMAIN, LinenShop
from app.settings import Settings
from app.shops.models import Shop, StaffMember, StaffRole
from integrations.stripe import seeding
from integrations.stripe.sandbox import DEMO_PERMISSIONS, StripeSandbox

# ------------------------------------------------------------------ a second shop


@dataclass(frozen=True)
class OtherShop:
    shop_id: Any
    domain: str
    owner: str
    approver: str
    case_id: str
    payment_intent_id: str
    account: Account


@pytest.fixture
def make_shop(
    session: Session, settings: Settings, sandbox: StripeSandbox
) -> Callable[[str], OtherShop]:
    """A shop created straight in the database, as an install would: staff, a Stripe
    connection with a restricted key of its own account, a paid order and a case.
    Protection mode is left at the model's default."""

    def make(domain: str) -> OtherShop:
        keys = sandbox.create_account(restricted_keys=[{"permissions": DEMO_PERMISSIONS}])
        client = stripe.StripeClient(
            keys.secret_key,
            base_addresses={"api": settings.stripe_api_base},
            max_network_retries=0,
        )
        account = Account(keys.id, keys.secret_key, keys.restricted_keys[0].key, client)
        name = domain.split(".", maxsplit=1)[0]
        owner, approver = f"{name}.owner", f"{name}.approver"
        now = utcnow()
        shop = Shop(domain=domain, name=name.title(), created_at=now)
        session.add(shop)
        session.flush()
        for user_id, role in ((owner, StaffRole.OWNER), (approver, StaffRole.APPROVER)):
            session.add(
                StaffMember(
                    shop_id=shop.id,
                    user_id=user_id,
                    role=role,
                    approval_limits={"usd": 100_000},
                )
            )
        session.flush()
        save_stripe_connection(
            session,
            shop=shop,
            actor=staff(owner, Surface.STAFF_API),
            api_key=account.restricted_key,
            livemode=False,
            webhook_secret=None,
            box=secret_box(settings),
            now=now,
        )
        checkout = seeding.paid_checkout(
            client, email=f"buyer@{domain}", name="Buyer", amount=5000, currency="usd"
        )
        customer = Customer(
            shop_id=shop.id, email=f"buyer@{domain}", stripe_customer_id=checkout.customer_id
        )
        session.add(customer)
        session.flush()
        session.add(
            Order(
                shop_id=shop.id,
                customer_id=customer.id,
                name="#2001",
                currency="usd",
                total=5000,
                payment_provider="stripe",
                payment_id=checkout.payment_intent_id,
                lines=[{"id": "mug", "title": "Mug", "quantity": 1, "paid": 5000}],
                created_at=now,
            )
        )
        case = open_case(
            session,
            shop=shop,
            actor=staff(owner, Surface.STAFF_API),
            customer_id=customer.id,
            subject="The mug arrived chipped",
            request_text="My mug arrived chipped.",
            identity_level="strong",
            now=now,
        )
        session.commit()
        return OtherShop(
            shop.id, domain, owner, approver, str(case.id), checkout.payment_intent_id, account
        )

    return make


@pytest.fixture
def provider_requests(sandbox: StripeSandbox, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every request the sandbox serves during the test: (method, path, key presented)."""
    seen: list[tuple[str, str, str]] = []
    serve = sandbox.engine.handle

    def recording(method: str, target: str, headers: Mapping[str, str], body: bytes) -> Any:
        key = (headers.get("Authorization") or "").removeprefix("Bearer ").strip()
        seen.append((method.upper(), target.split("?", maxsplit=1)[0], key))
        return serve(method, target, headers, body)

    monkeypatch.setattr(sandbox.engine, "handle", recording)
    return seen


# ------------------------------------------------------------------ helpers


def _ok(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, response.get_json()
    return response.get_json()


def _error(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.get_json()
    error: dict[str, Any] = response.get_json()["error"]
    assert error["message"]
    return error


def _refund(target: str, amount: int) -> dict[str, Any]:
    return {
        "kind": "refund",
        "target": target,
        "amount": amount,
        "currency": "usd",
        "params": {"reason": "requested_by_customer"},
    }


def _failing(proposal: dict[str, Any]) -> dict[str, str]:
    return {c["name"]: c["reason"] for c in proposal["verdict"]["checks"] if not c["passed"]}


def _shop_events(session: Session, shop_id: Any, kind: str | None = None) -> list[AuditEvent]:
    session.expire_all()
    query = select(AuditEvent).where(AuditEvent.shop_id == shop_id).order_by(AuditEvent.seq)
    if kind is not None:
        query = query.where(AuditEvent.kind == kind)
    return list(session.scalars(query))


def _assert_chain_intact(runner: FlaskCliRunner, domain: str) -> None:
    result = runner.invoke(args=["audit-verify", "--shop", domain])
    assert result.exit_code == 0, result.output
    assert "chain intact" in result.output


# ------------------------------------------------------------------ protection mode


def test_a_new_shop_is_read_only_and_no_write_reaches_the_provider(
    make_shop: Callable[[str], OtherShop],
    staff_for: Callable[[str, str], Staff],
    provider_requests: list[Any],
    session: Session,
    runner: FlaskCliRunner,
) -> None:
    shop = make_shop("fresh-fern.myshopify.com")
    owner, approver = staff_for(shop.domain, shop.owner), staff_for(shop.domain, shop.approver)
    assert _ok(owner.get("/api/shop"))["writes_enabled"] is False

    proposal = _ok(
        approver.post(
            f"/api/cases/{shop.case_id}/proposals", _refund(shop.payment_intent_id, 2000)
        ),
        201,
    )["proposal"]

    assert proposal["status"] == "blocked"
    assert "protection mode" in _failing(proposal)["writes_enabled"]
    refused = approver.post(
        f"/api/proposals/{proposal['id']}/approve", {"digest": proposal["digest"]}
    )
    assert _error(refused, 409)["code"] == "proposal_blocked"
    ours = [(m, path) for m, path, key in provider_requests if key == shop.account.restricted_key]
    assert ours, "the checks read fresh facts at the provider"
    assert [(m, path) for m, path in ours if m != "GET"] == []
    stripe_side = shop.account.stripe
    assert list(stripe_side.v1.refunds.list().data) == []
    assert not [e for e in stripe_side.v1.events.list().data if e.type.startswith("refund.")]

    # Only an owner turns writes on, and that is on the record.
    denied = approver.put("/api/shop/writes", {"enabled": True})
    assert _error(denied, 403)["code"] == "role_not_allowed"
    assert _ok(owner.get("/api/shop"))["writes_enabled"] is False
    assert _ok(owner.put("/api/shop/writes", {"enabled": True})) == {"writes_enabled": True}
    [event] = _shop_events(session, shop.shop_id, "shop.writes_enabled")
    assert event.actor == shop.owner

    again = _ok(
        approver.post(
            f"/api/cases/{shop.case_id}/proposals", _refund(shop.payment_intent_id, 2000)
        ),
        201,
    )["proposal"]
    assert again["status"] == "awaiting_approval"
    _assert_chain_intact(runner, shop.domain)


@pytest.fixture
def staff_for(client: FlaskClient, app: Flask) -> Callable[[str, str], Staff]:
    return lambda domain, user_id: Staff(client, app, domain, user_id)


# ------------------------------------------------------------------ kill switch


def test_the_kill_switch_halts_every_queued_action_of_the_shop(
    linen: LinenShop,
    owner: Staff,
    approver: Staff,
    proposer: Staff,
    account: Account,
    start_worker: Callable[[], WorkerProcess],
    session: Session,
    runner: FlaskCliRunner,
) -> None:
    seeded = next(
        p
        for p in _ok(approver.get(f"/api/cases/{linen.case_id}"))["proposals"]
        if p["id"] == str(linen.proposal_id)
    )
    second = _ok(
        proposer.post(
            f"/api/cases/{linen.case_id}/proposals", _refund(linen.payment_intent_id, 2000)
        ),
        201,
    )["proposal"]
    actions = [
        _ok(approver.post(f"/api/proposals/{p['id']}/approve", {"digest": p["digest"]}))["action"]
        for p in (seeded, second)
    ]
    assert all(a["status"] == "queued" for a in actions)

    # Any approver may stop everything.
    assert _ok(approver.put("/api/shop/kill-switch", {"engaged": True})) == {"kill_switch": True}
    start_worker()

    for action in actions:
        halted = wait_for(
            lambda a=action: (
                (now := _ok(approver.get(f"/api/actions/{a['id']}")))["status"] == "halted" and now
            ),
            what=f"action {action['id']} to halt",
        )
        assert "kill switch" in halted["status_reason"]
        assert halted["attempts"] == []
    refunds = account.stripe.v1.refunds.list(params={"payment_intent": linen.payment_intent_id})
    assert list(refunds.data) == []
    case = _ok(approver.get(f"/api/cases/{linen.case_id}"))
    assert case["status"] == "needs_attention"
    assert case["owner"] == APPROVER
    [engaged] = _shop_events(session, linen.shop_id, "shop.kill_switch_engaged")
    assert engaged.actor == APPROVER

    # Only an owner starts things again.
    release = approver.put("/api/shop/kill-switch", {"engaged": False})
    assert _error(release, 403)["code"] == "role_not_allowed"
    assert _ok(owner.put("/api/shop/kill-switch", {"engaged": False})) == {"kill_switch": False}
    _assert_chain_intact(runner, SHOP_DOMAIN)


# ------------------------------------------------------------------ keys


def _connection(session: Session, linen: LinenShop) -> Connection:
    session.expire_all()
    return session.scalars(select(Connection).where(Connection.shop_id == linen.shop_id)).one()


def test_a_secret_key_is_refused_with_advice_to_create_a_restricted_key(
    linen: LinenShop, owner: Staff, account: Account, session: Session
) -> None:
    before = _connection(session, linen).key_hint
    events_before = len(_shop_events(session, linen.shop_id))

    response = owner.put(
        "/api/shop/connections/stripe", {"api_key": account.secret_key, "livemode": False}
    )

    error = _error(response, 400)
    assert error["field"] == "api_key"
    assert "restricted key" in error["message"]
    assert account.secret_key not in response.get_data(as_text=True)
    assert _connection(session, linen).key_hint == before
    assert len(_shop_events(session, linen.shop_id)) == events_before


@pytest.mark.parametrize(
    ("make_key", "livemode", "says"),
    [
        (lambda account: account.restricted_key, True, "test-mode key"),
        (lambda _: "rk_live_" + secrets.token_hex(24), False, "live-mode key"),
    ],
    ids=["test key in live mode", "live key in test mode"],
)
def test_a_key_of_the_other_mode_is_refused(
    linen: LinenShop,
    owner: Staff,
    account: Account,
    session: Session,
    make_key: Callable[[Account], str],
    livemode: bool,
    says: str,
) -> None:
    key = make_key(account)
    before = _connection(session, linen)
    hint, mode = before.key_hint, before.livemode

    response = owner.put("/api/shop/connections/stripe", {"api_key": key, "livemode": livemode})

    error = _error(response, 400)
    assert error["field"] == "api_key"
    assert says in error["message"]
    assert key not in response.get_data(as_text=True)
    after = _connection(session, linen)
    assert (after.key_hint, after.livemode) == (hint, mode)


def test_a_connected_key_is_never_shown_again(
    linen: LinenShop,
    owner: Staff,
    approver: Staff,
    account: Account,
    sandbox: StripeSandbox,
    session: Session,
    runner: FlaskCliRunner,
) -> None:
    key = sandbox.add_restricted_key(account.id, DEMO_PERMISSIONS).key
    assert _error(
        approver.put("/api/shop/connections/stripe", {"api_key": key, "livemode": False}), 403
    )

    response = owner.put("/api/shop/connections/stripe", {"api_key": key, "livemode": False})

    saved = _ok(response)
    hint = saved["key"]
    assert hint.startswith("rk_test_")
    assert hint.endswith(key[-4:])
    assert key not in response.get_data(as_text=True)
    assert key not in owner.get("/api/shop").get_data(as_text=True)
    trail = json.dumps([(e.kind, e.data) for e in _shop_events(session, linen.shop_id)])
    assert key not in trail
    assert account.restricted_key not in trail
    [*_, connected] = _shop_events(session, linen.shop_id, "connection.saved")
    assert connected.actor == OWNER
    stored = _connection(session, linen)
    assert key.encode() not in stored.encrypted_secret
    assert stored.key_hint == hint
    _assert_chain_intact(runner, SHOP_DOMAIN)


def test_the_audit_trail_records_which_masked_key_was_connected(
    linen: LinenShop, session: Session
) -> None:
    hint = _connection(session, linen).key_hint
    assert hint.startswith("rk_test_")

    [connected] = _shop_events(session, linen.shop_id, "connection.saved")

    assert connected.data["key"] == hint, "the trail should show the same masked hint"
    assert connected.data["livemode"] is False


def test_the_shop_settings_show_which_key_is_connected(
    linen: LinenShop, owner: Staff, session: Session
) -> None:
    hint = _connection(session, linen).key_hint

    body = owner.get("/api/shop").get_data(as_text=True)

    assert hint in body, "Settings should say which (masked) Stripe key is connected"


# ------------------------------------------------------------------ tenant isolation


def test_staff_of_another_shop_cannot_see_or_touch_this_shops_cases(
    linen: LinenShop,
    approver: Staff,
    make_shop: Callable[[str], OtherShop],
    staff_for: Callable[[str, str], Staff],
) -> None:
    case = _ok(approver.get(f"/api/cases/{linen.case_id}"))
    proposal = case["proposals"][0]
    action = _ok(
        approver.post(f"/api/proposals/{proposal['id']}/approve", {"digest": proposal["digest"]})
    )["action"]
    other = make_shop("other-goods.myshopify.com")
    outsider = staff_for(other.domain, other.owner)

    attempts = {
        "case": outsider.get(f"/api/cases/{linen.case_id}"),
        "audit": outsider.get(f"/api/cases/{linen.case_id}/audit"),
        "propose": outsider.post(
            f"/api/cases/{linen.case_id}/proposals", _refund(linen.payment_intent_id, 100)
        ),
        "edit": outsider.put(
            f"/api/proposals/{proposal['id']}", _refund(linen.payment_intent_id, 100)
        ),
        "approve": outsider.post(
            f"/api/proposals/{proposal['id']}/approve", {"digest": proposal["digest"]}
        ),
        "reject": outsider.post(f"/api/proposals/{proposal['id']}/reject", {"reason": "no"}),
        "action": outsider.get(f"/api/actions/{action['id']}"),
    }

    assert {name: r.status_code for name, r in attempts.items()} == dict.fromkeys(attempts, 404)
    assert all(r.get_json()["error"]["code"] == "not_found" for r in attempts.values())
    listed = [c["id"] for c in _ok(outsider.get("/api/cases"))["cases"]]
    assert listed == [other.case_id]
    assert [c["id"] for c in _ok(approver.get("/api/cases"))["cases"]] == [str(linen.case_id)]
    assert _error(approver.get(f"/api/cases/{other.case_id}"), 404)["code"] == "not_found"
    after = _ok(approver.get(f"/api/cases/{linen.case_id}"))
    assert after["proposals"][0]["status"] == "approved"
    assert after["proposals"][0]["revision"] == proposal["revision"]
    assert [a["status"] for a in after["actions"]] == ["queued"]


def test_a_staff_id_has_a_role_only_in_its_own_shop(
    linen: LinenShop,
    make_shop: Callable[[str], OtherShop],
    staff_for: Callable[[str, str], Staff],
) -> None:
    other = make_shop("other-goods.myshopify.com")
    # Linen's approver, signed in with the other shop's token: a stranger there.
    impostor = staff_for(other.domain, APPROVER)

    response = impostor.post(
        f"/api/cases/{other.case_id}/proposals", _refund(other.payment_intent_id, 100)
    )

    assert _error(response, 403)["code"] == "no_role"
