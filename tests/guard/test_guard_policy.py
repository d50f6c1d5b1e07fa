"""Shop policy: safe defaults, JSON storage, and errors that name the field."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from app.guard import CapRule, IdentityLevel, PolicyError, PolicyRules
from app.money import Money
from integrations.provider import ActionKind


def test_defaults_allow_every_kind_but_nothing_without_a_person() -> None:
    policy = PolicyRules()

    assert policy.enabled_kinds == frozenset(ActionKind)
    assert dict(policy.auto_approve_ceiling) == {}
    assert dict(policy.two_person_threshold) == {}
    assert dict(policy.kind_ceilings) == {}
    assert policy.duplicate_window == timedelta(hours=72)
    assert policy.refund_window_days is None
    assert policy.per_customer_cap is None and policy.per_shop_cap is None
    assert policy.allowed_reasons is None
    assert set(policy.min_identity.values()) == {IdentityLevel.MEDIUM}
    assert policy.max_percent_off == 50


def test_a_full_policy_round_trips_through_json() -> None:
    policy = PolicyRules(
        version=7,
        enabled_kinds=frozenset({ActionKind.REFUND, ActionKind.DISCOUNT}),
        auto_approve_ceiling={"USD": 2500, "jpy": 3000},
        two_person_threshold={"usd": 50_000},
        kind_ceilings={
            ActionKind.REFUND: {"usd": 15_000, "JPY": 20_000},
            ActionKind.DISCOUNT: {"usd": 2_500},
        },
        duplicate_window=timedelta(hours=24),
        refund_window_days=30,
        per_customer_cap=CapRule(Money(20_000, "usd"), timedelta(days=30)),
        per_shop_cap=CapRule(Money(500_000, "usd"), timedelta(days=1)),
        allowed_reasons=frozenset({"damaged", "not_received"}),
        min_identity={ActionKind.REFUND: IdentityLevel.STRONG},
        max_percent_off=30,
    )

    stored = json.loads(json.dumps(policy.to_dict()))

    assert PolicyRules.from_dict(stored) == policy
    assert stored["auto_approve_ceiling"] == {"jpy": 3000, "usd": 2500}
    assert stored["kind_ceilings"] == {
        "discount": {"usd": 2500},
        "refund": {"jpy": 20000, "usd": 15000},
    }
    assert stored["per_customer_cap"] == {
        "amount": 20000,
        "currency": "usd",
        "period_seconds": 2592000,
    }
    assert stored["min_identity"]["refund"] == "strong"
    assert stored["min_identity"]["discount"] == "medium"


def test_missing_keys_take_the_defaults() -> None:
    assert PolicyRules.from_dict({"version": 3}) == PolicyRules(version=3)


def test_a_policy_stored_before_ceilings_per_kind_reads_as_it_did() -> None:
    stored = PolicyRules(two_person_threshold={"usd": 20_000}).to_dict()
    del stored["kind_ceilings"]

    policy = PolicyRules.from_dict(stored)

    assert dict(policy.kind_ceilings) == {}
    assert policy.to_dict() == {**stored, "kind_ceilings": {}}


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"version": 0}, "version"),
        ({"version": True}, "version"),
        ({"auto_approve_limit": {"usd": 1}}, "auto_approve_limit"),
        ({"enabled_kinds": ["refund", "chargeback"]}, "enabled_kinds"),
        ({"enabled_kinds": "refund"}, "enabled_kinds"),
        ({"auto_approve_ceiling": {"xyz": 100}}, "auto_approve_ceiling"),
        ({"auto_approve_ceiling": {"usd": -1}}, "auto_approve_ceiling.usd"),
        ({"two_person_threshold": {"usd": 1.5}}, "two_person_threshold.usd"),
        ({"kind_ceilings": {"refund": {"usd": -1}}}, "kind_ceilings.refund.usd"),
        ({"kind_ceilings": {"discount": {"usd": "20.00"}}}, "kind_ceilings.discount.usd"),
        ({"kind_ceilings": {"refund": {"xyz": 100}}}, "kind_ceilings.refund"),
        ({"kind_ceilings": {"chargeback": {"usd": 100}}}, "kind_ceilings"),
        ({"duplicate_window_seconds": 0}, "duplicate_window_seconds"),
        ({"refund_window_days": -3}, "refund_window_days"),
        (
            {"per_customer_cap": {"amount": 100, "currency": "usd"}},
            "per_customer_cap.period_seconds",
        ),
        (
            {"per_shop_cap": {"amount": 0, "currency": "usd", "period_seconds": 60}},
            "per_shop_cap.amount",
        ),
        (
            {"per_shop_cap": {"amount": 1, "currency": "usd", "period_seconds": 60, "x": 1}},
            "per_shop_cap.x",
        ),
        ({"allowed_reasons": ["damaged", ""]}, "allowed_reasons"),
        ({"allowed_reasons": [["nested"]]}, "allowed_reasons"),
        ({"min_identity": {"refund": "claim"}}, "min_identity.refund"),
        ({"min_identity": {"refund": "certain"}}, "min_identity.refund"),
        ({"max_percent_off": 101}, "max_percent_off"),
    ],
)
def test_invalid_settings_name_the_field(data: dict[str, Any], field: str) -> None:
    with pytest.raises(PolicyError) as raised:
        PolicyRules.from_dict(data)

    assert raised.value.field == field
    assert str(raised.value).startswith(f"{field}: ")


def test_a_policy_below_medium_identity_is_refused_even_when_built_directly() -> None:
    with pytest.raises(PolicyError, match="claim is not identity"):
        PolicyRules(min_identity={ActionKind.REFUND: IdentityLevel.CLAIM})


def test_periods_must_be_whole_positive_seconds() -> None:
    with pytest.raises(PolicyError) as raised:
        PolicyRules(per_customer_cap=CapRule(Money(100, "usd"), timedelta(milliseconds=1500)))

    assert raised.value.field == "per_customer_cap.period"


def test_identity_levels_order_by_trust_not_by_alphabet() -> None:
    assert IdentityLevel.NONE < IdentityLevel.CLAIM < IdentityLevel.MEDIUM < IdentityLevel.STRONG
    assert IdentityLevel.STRONG >= IdentityLevel.MEDIUM
    assert max(IdentityLevel) is IdentityLevel.STRONG
    assert IdentityLevel("claim") == "claim"
    # "none" sorts after "medium" in the alphabet; by trust it comes first, either way round.
    assert IdentityLevel.NONE < "medium"
    assert "none" < IdentityLevel.MEDIUM  # noqa: SIM300  (the reflected comparison)
    with pytest.raises(TypeError):
        _ = IdentityLevel.CLAIM < "maybe"
