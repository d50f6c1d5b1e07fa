"""The policy what-if over a seeded 90 days, as an owner asks it through the staff API with
the policy form's fields: what a stricter policy would have blocked or sent to more
people, what a looser one would have approved by itself, with the money of each; records
older than 90 days and another shop's past never counted; nothing saved, nothing written."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from admin_pages_support import APPROVER, OWNER, VIEWER, a_shop, api
from flask.testing import FlaskClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session
from whatif_support import ShopPast

from app.actors import Surface, staff
from app.audit import AuditEvent
from app.cases.models import case_reference
from app.cases.proposals import Proposal
from app.clock import utcnow
from app.settings import Settings
from app.shops.models import Shop, ShopPolicy
from app.shops.service import current_policy, save_policy
from integrations.provider import ActionKind

# The policy in force: approved by itself up to $50.00, two people above $200.00.
CURRENT = {"auto_approve_ceiling": {"usd": 5000}, "two_person_threshold": {"usd": 20000}}
FORM = {
    "currency": "usd",
    "enabled_kinds": [kind.value for kind in ActionKind],
    "auto_approve_ceiling": "50.00",
    "two_person_threshold": "200.00",
    "refund_ceiling": "",
    "customer_credit_ceiling": "",
    "discount_ceiling": "",
    "per_customer_cap": "",
    "per_customer_cap_days": "",
    "per_shop_cap": "",
    "per_shop_cap_days": "",
    "duplicate_window_days": "3",
    "refund_window_days": "",
    "max_percent_off": "50",
    "store_credit_bonus_percent": "",
    "replacement_discount": False,
    "handover_owner": "",
}
# Stricter: approved by itself up to $20.00 only, two people above $100.00, and at most
# $150.00 to one customer in 30 days.
STRICTER = FORM | {
    "auto_approve_ceiling": "20.00",
    "two_person_threshold": "100.00",
    "per_customer_cap": "150.00",
    "per_customer_cap_days": "30",
}
# Looser: approved by itself up to $160.00, two people only above $300.00.
LOOSER = FORM | {"auto_approve_ceiling": "160.00", "two_person_threshold": "300.00"}


@dataclass(frozen=True)
class Seeded:
    shop: Shop
    references: dict[str, str]


@pytest.fixture
def seeded(session: Session, settings: Settings) -> Seeded:
    """The linen shop's last 90 days (and a little before), under :data:`CURRENT`."""
    shop = a_shop(session, settings, "linen")
    save_policy(
        session, shop=shop, actor=staff(OWNER, Surface.SHOPIFY_ADMIN), rules=CURRENT, now=utcnow()
    )
    past = ShopPast(session, shop, utcnow())
    made = {
        # Proposals that kept the inputs of their checks.
        "small": past.proposal(customer="cus_a", amount=1500, days=10),
        "thirty": past.proposal(customer="cus_b", amount=3000, days=20),
        "large": past.proposal(customer="cus_c", amount=15000, days=30),
        "first_of_d": past.proposal(customer="cus_d", amount=6000, days=16, payment="pi_d0"),
        "second_of_d": past.proposal(customer="cus_d", amount=12000, days=5, payment="pi_d1"),
        # Made before inputs were kept: rebuilt from the proposal and our order.
        "older_refund": past.proposal(
            customer="cus_e", amount=4500, days=40, kept=False, order_total=9000
        ),
        "older_credit": past.proposal(
            customer="cus_f", amount=1000, days=50, kind=ActionKind.CUSTOMER_CREDIT, kept=False
        ),
    }
    # D's first refund was approved and made at Stripe the day after it was proposed...
    first_action = past.action(made["first_of_d"], days=15)
    past.record(
        "re_first_of_d",
        days=15,
        amount=6000,
        payment="pi_d0",
        customer="cus_d",
        payment_amount=12000,
        caseward_action_id=str(first_action.id),
    )
    # ... and money moved outside Caseward, as the history check read it.
    past.record(
        "re_outside_small",
        days=60,
        amount=2500,
        payment="pi_g",
        customer="cus_g",
        payment_amount=5000,
    )
    past.record(
        "re_outside_large",
        days=70,
        amount=25000,
        payment="pi_h",
        customer="cus_h",
        payment_amount=30000,
    )
    past.record(
        "re_outside_disputed",
        days=33,
        amount=3500,
        payment="pi_i",
        customer="cus_i",
        payment_amount=3500,
        payment_disputed=True,
    )
    past.record(
        "re_too_old", days=100, amount=25000, payment="pi_j", customer="cus_j", payment_amount=30000
    )
    # Another shop's past, which would change under either candidate.
    other = ShopPast(session, a_shop(session, settings, "other"), utcnow())
    other.proposal(customer="cus_x", amount=25000, days=3)
    other.record(
        "re_other_shop",
        days=3,
        amount=40000,
        payment="pi_x",
        customer="cus_x",
        payment_amount=40000,
    )
    session.commit()
    return Seeded(shop, {name: case_reference(p.case_id) for name, p in made.items()})


def _what_if(client: FlaskClient, shop: Shop, body: dict[str, Any], user: str = OWNER) -> Any:
    return api(client, shop, user, "POST", "/api/shop/policy/what-if", body)


def _counts(answer: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """Each class's count and its money in US cents."""
    counts = {}
    for change, found in answer["classes"].items():
        money = {m["currency"]: m["amount"] for m in found["money"]}
        assert set(money) <= {"usd"}
        counts[change] = (found["count"], money.get("usd", 0))
    return counts


def _changed(answer: dict[str, Any], seeded: Seeded) -> dict[str, str]:
    """The changed actions by the name they were seeded under (a record: its id)."""
    names = {reference: name for name, reference in seeded.references.items()}
    return {
        names.get(item["reference"], item["reference"]): item["change"] for item in answer["items"]
    }


def test_a_stricter_policy_shows_what_it_would_have_blocked_and_sent_to_more_people(
    client: FlaskClient, seeded: Seeded
) -> None:
    answer = _what_if(client, seeded.shop, STRICTER)

    assert answer.status_code == 200, answer.get_json()
    body = answer.get_json()
    assert _counts(body) == {
        # D's second refund takes D past $150.00 in 30 days; $250.00 outside Caseward too.
        "would_block": (2, 12000 + 25000),
        "would_escalate": (4, 3000 + 15000 + 4500 + 2500),
        "would_auto_approve": (0, 0),
        "unchanged": (4, 1500 + 6000 + 1000 + 3500),
    }
    assert _changed(body, seeded) == {
        "second_of_d": "would_block",
        "re_outside_large": "would_block",
        "thirty": "would_escalate",
        "large": "would_escalate",
        "older_refund": "would_escalate",
        "re_outside_small": "would_escalate",
    }
    # The refund older than 90 days and the other shop's are not among the ten replayed.
    assert (body["replayed"], body["reconstructed"], body["items_total"]) == (10, 5, 6)
    assert body["policy_version"] == 2


def test_each_changed_action_says_why_and_links_to_its_case(
    client: FlaskClient, seeded: Seeded
) -> None:
    body = _what_if(client, seeded.shop, STRICTER).get_json()

    blocked = next(i for i in body["items"] if i["reference"] == seeded.references["second_of_d"])
    assert (blocked["kind"], blocked["amount"]["display"]) == ("refund", "$120.00")
    assert blocked["current"] == {"outcome": "needs_approval", "approvals_required": 1}
    assert blocked["candidate"]["outcome"] == "blocked"
    assert blocked["reconstructed"] is False and blocked["source"] == "proposal"
    [failing] = blocked["candidate"]["failing"]
    assert failing["check_said"] == "Within the per-customer cap"
    assert "$180.00" in failing["said"] and "$150.00" in failing["said"]
    assert blocked["case_url"].endswith(
        f"/store/linen/apps/caseward/app/cases/{blocked['case_id']}"
    )
    outside = next(i for i in body["items"] if i["reference"] == "re_outside_large")
    assert outside["case_id"] is None and outside["case_url"] is None
    assert (outside["source"], outside["reconstructed"]) == ("history", True)
    large = next(i for i in body["items"] if i["reference"] == seeded.references["large"])
    assert large["candidate"]["approvals_required"] == 2
    assert large["candidate"]["said"].startswith("Two people must approve: $150.00 is above")
    # Blocks first, then escalations; the newest first in each.
    assert [i["change"] for i in body["items"]] == ["would_block"] * 2 + ["would_escalate"] * 4
    assert [i["at"] for i in body["items"][2:]] == sorted(
        (i["at"] for i in body["items"][2:]), reverse=True
    )


def test_a_looser_policy_shows_what_it_would_have_approved_by_itself(
    client: FlaskClient, seeded: Seeded
) -> None:
    body = _what_if(client, seeded.shop, LOOSER).get_json()

    assert _counts(body) == {
        "would_block": (0, 0),
        "would_escalate": (0, 0),
        "would_auto_approve": (3, 15000 + 6000 + 12000),
        # The $250.00 outside Caseward needs one person instead of two: still a person's.
        "unchanged": (7, 1500 + 3000 + 4500 + 1000 + 2500 + 25000 + 3500),
    }
    assert set(_changed(body, seeded)) == {"large", "first_of_d", "second_of_d"}


def test_the_current_rules_change_nothing(client: FlaskClient, seeded: Seeded) -> None:
    body = _what_if(client, seeded.shop, {"rules": CURRENT}).get_json()

    assert body["classes"]["unchanged"]["count"] == 10
    assert body["items"] == [] and body["items_total"] == 0


def test_nothing_is_saved_or_recorded(
    client: FlaskClient, session: Session, seeded: Seeded
) -> None:
    events = session.scalar(select(func.count()).select_from(AuditEvent))
    kept = session.scalars(select(Proposal.guard_inputs).order_by(Proposal.id)).all()

    assert _what_if(client, seeded.shop, STRICTER).status_code == 200

    session.expire_all()
    assert current_policy(session, seeded.shop.id).version == 2
    assert (
        session.scalar(
            select(func.count()).select_from(ShopPolicy).where(ShopPolicy.shop_id == seeded.shop.id)
        )
        == 1
    )
    assert session.scalar(select(func.count()).select_from(AuditEvent)) == events
    assert session.scalars(select(Proposal.guard_inputs).order_by(Proposal.id)).all() == kept


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (STRICTER | {"per_customer_cap_days": ""}, "per_customer_cap_days"),
        (STRICTER | {"auto_approve_ceiling": "twenty"}, "auto_approve_ceiling"),
        (STRICTER | {"colour": "red"}, "colour"),
        ({"rules": {"max_percent_off": 140}}, "rules.max_percent_off"),
        ({"rules": CURRENT, "currency": "usd"}, "currency"),
    ],
)
def test_a_candidate_that_cannot_be_read_is_refused_by_its_field(
    client: FlaskClient, seeded: Seeded, body: dict[str, Any], field: str
) -> None:
    answer = _what_if(client, seeded.shop, body)

    assert answer.status_code == 400
    assert answer.get_json()["error"]["field"] == field


@pytest.mark.parametrize("user", [APPROVER, VIEWER])
def test_only_an_owner_may_ask(client: FlaskClient, seeded: Seeded, user: str) -> None:
    answer = _what_if(client, seeded.shop, STRICTER, user)

    assert answer.status_code == 403
    assert answer.get_json()["error"]["code"] == "role_not_allowed"
