"""A shop owner saving a policy: each refusal names the setting and says what is wrong
(the API shows both), and every value at the edge of what is allowed is kept as given."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from app.guard import CapRule, IdentityLevel, PolicyError, PolicyRules
from app.money import Money
from integrations.provider import ActionKind

TOO_LONG = "x" * 256
CAP = {"amount": 100, "currency": "usd", "period_seconds": 60}


@pytest.mark.parametrize(
    ("data", "field", "reason"),
    [
        (["not an object"], "policy", "must be a JSON object"),
        ({"version": 0}, "version", "must be at least 1, got 0"),
        ({"version": "1"}, "version", "must be a whole number, got '1'"),
        ({"version": 2**31}, "version", "must be at most 2147483647, got 2147483648"),
        ({"auto_approve_limit": {"usd": 1}}, "auto_approve_limit", "is not a policy setting"),
        ({"enabled_kinds": "refund"}, "enabled_kinds", "must be a list, got 'refund'"),
        (
            {"enabled_kinds": ["refund", "chargeback"]},
            "enabled_kinds",
            "'chargeback' is not an action kind",
        ),
        ({"auto_approve_ceiling": [1]}, "auto_approve_ceiling", "must be an object, got [1]"),
        (
            {"auto_approve_ceiling": {"xyz": 100}},
            "auto_approve_ceiling",
            "unknown currency 'xyz': expected an ISO 4217 code such as 'usd'",
        ),
        (
            {"auto_approve_ceiling": {"usd": 2**31}},
            "auto_approve_ceiling.usd",
            "must be at most 2147483647, got 2147483648",
        ),
        ({"kind_ceilings": [1]}, "kind_ceilings", "must be an object, got [1]"),
        ({"kind_ceilings": {"refund": 5}}, "kind_ceilings.refund", "must be an object, got 5"),
        (
            {"kind_ceilings": {"subscription_cancel": {"usd": 100}}},
            "kind_ceilings.subscription_cancel",
            "moves no money, so it has no ceiling",
        ),
        (
            {"kind_ceilings": {"customer_credit": {"usd": 2**31}}},
            "kind_ceilings.customer_credit.usd",
            "must be at most 2147483647, got 2147483648",
        ),
        ({"duplicate_window_seconds": 0}, "duplicate_window_seconds", "must be at least 1, got 0"),
        (
            {"duplicate_window_seconds": 366 * 86400 + 1},
            "duplicate_window_seconds",
            "must be at most 31622400, got 31622401",
        ),
        ({"refund_window_days": 0}, "refund_window_days", "must be at least 1, got 0"),
        ({"refund_window_days": 367}, "refund_window_days", "must be at most 366, got 367"),
        ({"per_customer_cap": [100]}, "per_customer_cap", "must be an object, got [100]"),
        (
            {"per_customer_cap": {"amount": 100, "currency": "usd"}},
            "per_customer_cap.period_seconds",
            "is required",
        ),
        ({"per_customer_cap": {**CAP, "x": 1}}, "per_customer_cap.x", "is not a cap setting"),
        (
            {"per_customer_cap": {**CAP, "amount": 2**31}},
            "per_customer_cap.amount",
            "must be at most 2147483647, got 2147483648",
        ),
        (
            {"per_customer_cap": {**CAP, "amount": 0}},
            "per_customer_cap.amount",
            "must be at least 1, got 0",
        ),
        (
            {"per_shop_cap": {**CAP, "currency": 5}},
            "per_shop_cap.currency",
            "5 is not a currency code",
        ),
        (
            {"per_shop_cap": {**CAP, "currency": "usdollar"}},
            "per_shop_cap.currency",
            "unknown currency 'usdollar': expected an ISO 4217 code such as 'usd'",
        ),
        (
            {"per_shop_cap": {**CAP, "period_seconds": 0}},
            "per_shop_cap.period_seconds",
            "must be at least 1, got 0",
        ),
        ({"allowed_reasons": "damaged"}, "allowed_reasons", "must be a list, got 'damaged'"),
        (
            {"allowed_reasons": ["damaged", ""]},
            "allowed_reasons",
            "'' is not a reason (printable text of 1 to 255 characters)",
        ),
        (
            {"allowed_reasons": ["tab\there"]},
            "allowed_reasons",
            "'tab\\there' is not a reason (printable text of 1 to 255 characters)",
        ),
        (
            {"allowed_reasons": [TOO_LONG]},
            "allowed_reasons",
            f"'{TOO_LONG}' is not a reason (printable text of 1 to 255 characters)",
        ),
        (
            {"allowed_reasons": [f"r{i}" for i in range(101)]},
            "allowed_reasons",
            "may list at most 100 reasons",
        ),
        ({"min_identity": ["refund"]}, "min_identity", "must be an object, got ['refund']"),
        (
            {"min_identity": {"chargeback": "strong"}},
            "min_identity",
            "'chargeback' is not an action kind",
        ),
        (
            {"min_identity": {"refund": "certain"}},
            "min_identity.refund",
            "'certain' is not an identity level",
        ),
        (
            {"min_identity": {"refund": "claim"}},
            "min_identity.refund",
            "cannot be below medium: claim is not identity",
        ),
        ({"max_percent_off": 0}, "max_percent_off", "must be at least 1, got 0"),
        ({"max_percent_off": 101}, "max_percent_off", "must be at most 100, got 101"),
    ],
)
def test_a_refused_setting_is_named_with_what_is_wrong(data: Any, field: str, reason: str) -> None:
    with pytest.raises(PolicyError) as raised:
        PolicyRules.from_dict(data)

    assert (raised.value.field, raised.value.reason) == (field, reason)
    assert str(raised.value) == f"{field}: {reason}"
    assert str(raised.value.sentence) == reason


FRENCH = {"must be at most %(maximum)s, got %(value)s": "au plus %(maximum)s, pas %(value)s"}


class French:
    """The catalogue of an owner who reads French, as far as this test needs it."""

    def gettext(self, message: str) -> str:
        return FRENCH.get(message, message)

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        return singular if n == 1 else plural


def test_a_refused_setting_is_said_in_the_owners_language() -> None:
    with pytest.raises(PolicyError) as raised:
        PolicyRules.from_dict({"refund_window_days": 3660})

    assert raised.value.sentence.in_locale(French(), "fr") == "au plus 366, pas 3660"


EDGES: list[dict[str, Any]] = [
    {"version": 1},
    {"version": 2**31 - 1},
    {"auto_approve_ceiling": {"usd": 0}, "two_person_threshold": {"usd": 2**31 - 1}},
    {"kind_ceilings": {"refund": {"usd": 0}, "discount": {"jpy": 2**31 - 1}}},
    {"duplicate_window_seconds": 1},
    {"duplicate_window_seconds": 366 * 86400},
    {"refund_window_days": 1},
    {"refund_window_days": 366},
    {"refund_window_days": None},
    {"per_customer_cap": {"amount": 1, "currency": "usd", "period_seconds": 1}},
    {"per_shop_cap": {"amount": 2**31 - 1, "currency": "eur", "period_seconds": 366 * 86400}},
    {"allowed_reasons": [f"r{i}" for i in range(100)]},
    {"allowed_reasons": ["x" * 255, "late"]},
    {"allowed_reasons": None},
    {"max_percent_off": 1},
    {"max_percent_off": 100},
]


@pytest.mark.parametrize("data", EDGES, ids=",".join)
def test_a_setting_at_the_edge_of_what_is_allowed_is_kept(data: dict[str, Any]) -> None:
    stored = PolicyRules.from_dict(data).to_dict()

    for key, value in data.items():
        assert stored[key] == (sorted(value) if key == "allowed_reasons" and value else value)
    assert PolicyRules.from_dict(stored).to_dict() == stored


def test_the_default_policy_is_stored_and_read_back_unchanged() -> None:
    stored = PolicyRules().to_dict()

    assert stored["allowed_reasons"] is None
    assert stored["refund_window_days"] is None
    assert PolicyRules.from_dict(stored) == PolicyRules()


@pytest.mark.parametrize(
    ("level", "other", "lt", "le", "gt", "ge"),
    [
        (IdentityLevel.MEDIUM, "medium", False, True, False, True),
        (IdentityLevel.MEDIUM, "strong", True, True, False, False),
        (IdentityLevel.MEDIUM, "claim", False, False, True, True),
        (IdentityLevel.NONE, "claim", True, True, False, False),
    ],
)
def test_identity_levels_compare_by_trust(
    level: IdentityLevel, other: str, lt: bool, le: bool, gt: bool, ge: bool
) -> None:
    assert (level < other, level <= other, level > other, level >= other) == (lt, le, gt, ge)


@pytest.mark.parametrize(
    ("rules", "field", "reason"),
    [
        ({"version": 0}, "version", "must be at least 1, got 0"),
        ({"version": 2**31}, "version", "must be at most 2147483647, got 2147483648"),
        (
            {"enabled_kinds": frozenset({"refund"})},
            "enabled_kinds",
            "'refund' is not an action kind",
        ),
        (
            {"auto_approve_ceiling": {"xyz": 1}},
            "auto_approve_ceiling",
            "unknown currency 'xyz': expected an ISO 4217 code such as 'usd'",
        ),
        (
            {"two_person_threshold": {"usd": -1}},
            "two_person_threshold.usd",
            "must be at least 0, got -1",
        ),
        (
            {"duplicate_window": timedelta(0)},
            "duplicate_window",
            "must be a positive whole number of seconds, got datetime.timedelta(0)",
        ),
        (
            {"duplicate_window": timedelta(days=367)},
            "duplicate_window",
            "must be at most 31622400 seconds (366 days)",
        ),
        ({"refund_window_days": 367}, "refund_window_days", "must be at most 366, got 367"),
        (
            {"per_shop_cap": CapRule(Money(2**31, "usd"), timedelta(days=1))},
            "per_shop_cap.limit",
            "must be at most 2147483647, got 2147483648",
        ),
        (
            {"allowed_reasons": frozenset({""})},
            "allowed_reasons",
            "'' is not a reason (printable text of 1 to 255 characters)",
        ),
        ({"max_percent_off": 101}, "max_percent_off", "must be at most 100, got 101"),
        (
            {"min_identity": {"refund": IdentityLevel.STRONG}},
            "min_identity",
            "'refund': <IdentityLevel.STRONG: 'strong'> is not a kind and a level",
        ),
        (
            {"min_identity": {ActionKind.REFUND: "strong"}},
            "min_identity",
            "<ActionKind.REFUND: 'refund'>: 'strong' is not a kind and a level",
        ),
    ],
)
def test_rules_built_in_code_are_held_to_the_same_limits(
    rules: dict[str, Any], field: str, reason: str
) -> None:
    with pytest.raises(PolicyError) as raised:
        PolicyRules(**rules)

    assert (raised.value.field, raised.value.reason) == (field, reason)


def test_currency_codes_in_the_rules_are_read_in_any_case() -> None:
    policy = PolicyRules(auto_approve_ceiling={"USD": 2000}, two_person_threshold={"Usd": 5000})

    assert dict(policy.auto_approve_ceiling) == {"usd": 2000}
    assert dict(policy.two_person_threshold) == {"usd": 5000}


def test_an_identity_level_is_never_compared_with_an_unknown_word() -> None:
    with pytest.raises(TypeError, match="cannot compare an identity level with 'maybe'"):
        _ = IdentityLevel.CLAIM < "maybe"
