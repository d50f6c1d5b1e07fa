"""The checker accepts Stripe's own 2026 example objects, and the README's notes hold."""

import copy
import json

import pytest
from stripe_spec import (
    KNOWN_REMOVED_FIELDS,
    MOVED_FIELDS,
    README_RESOURCES,
    assert_stripe_object,
    check_stripe_object,
    load_fixtures,
    load_schemas,
    require_specs,
    specs_dir,
)

NINE = [
    "refund",
    "charge",
    "payment_intent",
    "customer_balance_transaction",
    "coupon",
    "promotion_code",
    "subscription",
    "dispute",
    "event",
]

# README: "Top-level fields in the 2026 fixtures that are not in the 2023 schemas".
README_NEW_FIELDS = {
    "refund": {"customer", "customer_account", "destination_details", "payment_method"},
    "payment_intent": {
        "customer_account",
        "excluded_payment_method_types",
        "managed_payments",
        "payment_method_configuration_details",
        "source",
    },
    "promotion_code": {"customer_account", "promotion"},
    "subscription": {
        "billing_cycle_anchor_config",
        "billing_mode",
        "billing_schedules",
        "customer_account",
        "discounts",
        "invoice_settings",
        "managed_payments",
    },
    "customer_balance_transaction": {"checkout_session", "customer_account"},
    "dispute": {"enhanced_eligibility_types"},
    "charge": {"source"},
    "coupon": set(),
    "event": set(),
}


@pytest.fixture(autouse=True)
def _specs():
    require_specs()


def fixture(name):
    return copy.deepcopy(load_fixtures()[name])


@pytest.mark.parametrize("resource", NINE)
def test_2026_fixture_passes(resource):
    obj = fixture(resource)
    assert check_stripe_object(obj) == []
    assert check_stripe_object(obj, resource) == []
    assert_stripe_object(obj)


@pytest.mark.parametrize("resource", ["deleted_customer", "deleted_coupon"])
def test_deleted_fixture_passes(resource):
    obj = fixture(resource)
    assert obj["deleted"] is True
    assert check_stripe_object(obj) == []
    assert check_stripe_object(obj, obj["object"]) == []  # "customer" means either form


@pytest.mark.parametrize("resource", ["customer", "subscription_item", "price", "discount"])
def test_referenced_resource_fixtures_pass(resource):
    assert check_stripe_object(fixture(resource)) == []


@pytest.mark.parametrize("resource", NINE)
def test_list_envelope_of_fixtures_passes(resource):
    envelope = {
        "object": "list",
        "data": [fixture(resource), fixture(resource)],
        "has_more": False,
        "url": f"/v1/{resource}s",
    }
    assert check_stripe_object(envelope) == []
    assert check_stripe_object(envelope, resource) == []


def test_empty_list_envelope_passes():
    assert (
        check_stripe_object({"object": "list", "data": [], "has_more": False, "url": "/v1/x"}) == []
    )


def test_event_wrapping_a_known_resource_passes():
    event = fixture("event")
    event["type"] = "charge.refunded"
    event["data"] = {"object": fixture("charge"), "previous_attributes": {"refunded": False}}
    assert check_stripe_object(event) == []


def test_new_nested_fields_known_from_the_fixture_are_accepted():
    charge = fixture("charge")
    assert "regulated_status" in charge["payment_method_details"]["card"]
    assert "regulated_status" not in (load_schemas()["payment_method_details_card"]["properties"])
    assert check_stripe_object(charge) == []


def test_optional_2023_fields_absent_from_the_fixture_are_allowed():
    refund = fixture("refund")
    refund["failure_reason"] = "declined"
    refund["description"] = "partial"
    charge = fixture("charge")
    charge["invoice"] = None  # README: in the 2023 schema, not in the 2026 fixture
    assert check_stripe_object(refund) == []
    assert check_stripe_object(charge) == []


def test_removed_2023_fields_may_be_absent_or_present():
    promo = fixture("promotion_code")
    assert "coupon" not in promo
    assert check_stripe_object(promo) == []
    promo["coupon"] = fixture("coupon")  # 2023 shape alongside the 2026 `promotion`
    assert check_stripe_object(promo) == []
    sub = fixture("subscription")
    assert "current_period_end" not in sub
    sub["current_period_start"] = 1234567890
    sub["current_period_end"] = 1234567899
    assert check_stripe_object(sub) == []


def test_number_accepts_int_and_float():
    coupon = fixture("coupon")
    coupon["percent_off"] = 25
    assert check_stripe_object(coupon) == []
    coupon["percent_off"] = 25.5
    assert check_stripe_object(coupon) == []


@pytest.mark.parametrize("resource", NINE)
def test_readme_new_fields_match_fixture_minus_schema(resource):
    fixture_keys = set(load_fixtures()[resource])
    schema_keys = set(load_schemas()[resource]["properties"])
    assert fixture_keys - schema_keys == README_NEW_FIELDS[resource]


def test_readme_removed_fields_match_the_data():
    old = json.loads((specs_dir() / "stripe-fixtures3-2023-08-16.json").read_text())["resources"]
    new = load_fixtures()
    schemas = load_schemas()
    for resource in NINE:
        dropped = set(old[resource]) - set(new[resource])
        assert dropped == set(KNOWN_REMOVED_FIELDS.get(resource, {})), resource
        # The only 2023-required fields the 2026 fixture lacks are the documented ones.
        required_missing = set(schemas[resource].get("required", ())) - set(new[resource])
        assert required_missing <= dropped, resource
    assert set(README_RESOURCES) == set(NINE)


def test_moved_fields_exist_at_their_new_place():
    for resource, fields in MOVED_FIELDS.items():
        for field, (old_resource, old_field) in fields.items():
            assert field in load_fixtures()[resource]
            assert old_field in load_schemas()[old_resource]["properties"]


def test_the_spec_files_are_read_once():
    # Every sandbox answer is checked: re-reading the files per object would be the cost.
    assert load_fixtures() is load_fixtures()
    assert load_schemas() is load_schemas()
