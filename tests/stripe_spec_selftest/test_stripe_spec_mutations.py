"""Each kind of mistake in a Stripe object is caught, with a message naming the field."""

import copy

import pytest
from stripe_spec import assert_stripe_object, check_stripe_object, load_fixtures, require_specs


@pytest.fixture(autouse=True)
def _specs():
    require_specs()


def fixture(name):
    return copy.deepcopy(load_fixtures()[name])


def _set(path, value):
    """Mutation setting a nested key; ``path`` is a list of keys/indexes. A callable
    ``value`` is called at test time (the spec files are only read after the skip check)."""

    def mutate(obj):
        target = obj
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value() if callable(value) else value

    return mutate


def _pop(key):
    def mutate(obj):
        del obj[key]

    return mutate


def _without(obj, key):
    del obj[key]
    return obj


def _expand(key, resource, changes):
    def mutate(obj):
        expanded = fixture(resource)
        expanded.update(changes)
        obj[key] = expanded

    return mutate


# (resource, mutation, expected message start)
MUTATIONS = {
    "wrong type": (
        "charge",
        _set(["amount"], "100"),
        "charge.amount: expected integer, got string ('100')",
    ),
    "wrong type string field": (
        "refund",
        _set(["currency"], 840),
        "refund.currency: expected string, got integer",
    ),
    "null in non-nullable": (
        "charge",
        _set(["paid"], None),
        "charge.paid: null but the field is not nullable",
    ),
    "null in non-nullable nested": (
        "dispute",
        _set(["evidence_details", "has_evidence"], None),
        "dispute.evidence_details.has_evidence: null but the field is not nullable",
    ),
    "value outside enum": (
        "charge",
        _set(["status"], "done"),
        "charge.status: 'done' not in enum ['failed', 'pending', 'succeeded']",
    ),
    "value outside nullable enum": (
        "refund",
        _set(["reason"], "changed_mind"),
        "refund.reason: 'changed_mind' not in enum",
    ),
    "value outside enum (dispute status)": (
        "dispute",
        _set(["status"], "open"),
        "dispute.status: 'open' not in enum",
    ),
    "wrong object tag": (
        "coupon",
        _set(["duration"], "weekly"),
        "coupon.duration: 'weekly' not in enum",
    ),
    "missing fixture field": (
        "refund",
        _pop("currency"),
        "refund.currency: missing (present in the 2026 fixture)",
    ),
    "missing new-in-2026 fixture field": (
        "promotion_code",
        _pop("promotion"),
        "promotion_code.promotion: missing (present in the 2026 fixture)",
    ),
    "missing nullable fixture field": (
        "payment_intent",
        _pop("latest_charge"),
        "payment_intent.latest_charge: missing",
    ),
    "invented field": (
        "refund",
        _set(["refunded_by"], "agent"),
        "refund.refunded_by: unexpected field",
    ),
    "invented nested field": (
        "charge",
        _set(["payment_method_details", "card", "cardholder_mood"], "happy"),
        "charge.payment_method_details.card.cardholder_mood: unexpected field",
    ),
    "wrong type inside expandable field (neither id nor object)": (
        "refund",
        _set(["charge"], 12345),
        "refund.charge: expected string or object (charge), got integer",
    ),
    "wrong type inside expanded object": (
        "refund",
        _expand("charge", "charge", {"amount_refunded": "0"}),
        "refund.charge.amount_refunded: expected integer, got string",
    ),
    "wrong type inside expanded customer": (
        "charge",
        _expand("customer", "customer", {"delinquent": "no"}),
        "charge.customer.delinquent: expected boolean, got string",
    ),
    "nested object with wrong type": (
        "charge",
        _set(["billing_details", "address", "city"], 3),
        "charge.billing_details.address.city: expected string, got integer",
    ),
    "deeply nested object with wrong type": (
        "charge",
        _set(["payment_method_details", "card", "exp_month"], "08"),
        "charge.payment_method_details.card.exp_month: expected integer, got string",
    ),
    "nested object replaced by a string": (
        "charge",
        _set(["outcome"], "authorized"),
        "charge.outcome: expected object (charge_outcome), got string",
    ),
    "bool where integer required": (
        "refund",
        _set(["amount"], True),
        "refund.amount: expected integer, got boolean (True)",
    ),
    "bool where integer required (nested list item)": (
        "subscription",
        _set(["items", "data", 0, "quantity"], True),
        "subscription.items.data[0].quantity: expected integer, got boolean",
    ),
    "float where integer required": (
        "payment_intent",
        _set(["amount"], 10.99),
        "payment_intent.amount: expected integer, got number (10.99)",
    ),
    "string where number required": (
        "coupon",
        _set(["percent_off"], "25.5"),
        "coupon.percent_off: expected number, got string",
    ),
    "metadata value not a string": (
        "refund",
        _set(["metadata"], {"order_id": 1001}),
        "refund.metadata.order_id: expected string, got integer",
    ),
    "array of strings with a non-string": (
        "payment_intent",
        _set(["payment_method_types"], ["card", 7]),
        "payment_intent.payment_method_types[1]: expected string, got integer",
    ),
    "embedded list envelope with a bad item": (
        "charge",
        _set(["refunds", "data"], lambda: [{**fixture("refund"), "status": 5}]),
        "charge.refunds.data[0].status: expected string, got integer",
    ),
    "embedded list envelope missing url": (
        "charge",
        _set(["refunds"], {"object": "list", "data": [], "has_more": False}),
        "charge.refunds.url: missing",
    ),
    "moved field checked at its new place": (
        "subscription",
        _set(["items", "data", 0, "current_period_end"], "soon"),
        "subscription.items.data[0].current_period_end: expected integer, got string",
    ),
    "removed 2023 field present with a wrong type": (
        "promotion_code",
        _set(["coupon"], 5),
        "promotion_code.coupon: expected object (coupon), got integer",
    ),
    "event payload checked as its resource": (
        "event",
        _set(["data", "object"], lambda: {**fixture("refund"), "amount": "1"}),
        "event.data.object.amount: expected integer, got string",
    ),
    "event payload missing a fixture field": (
        "event",
        _set(["data", "object"], lambda: _without(fixture("dispute"), "reason")),
        "event.data.object.reason: missing",
    ),
    "deleted object with a bad flag": (
        "deleted_customer",
        _set(["deleted"], "yes"),
        "deleted_customer.deleted: expected boolean, got string",
    ),
    "deleted object with an invented field": (
        "deleted_customer",
        _set(["email"], "a@example.com"),
        "deleted_customer.email: unexpected field",
    ),
}


@pytest.mark.parametrize("case", MUTATIONS, ids=list(MUTATIONS))
def test_mutation_is_caught(case):
    resource, mutate, expected = MUTATIONS[case]
    obj = fixture(resource)
    assert check_stripe_object(obj) == []
    mutate(obj)
    problems = check_stripe_object(obj)
    assert problems, f"{case}: not caught"
    assert any(p.startswith(expected) for p in problems), problems
    with pytest.raises(AssertionError) as err:
        assert_stripe_object(obj)
    assert expected in str(err.value)


def _refund_list(*items, **overrides):
    envelope = {"object": "list", "data": list(items), "has_more": False, "url": "/v1/refunds"}
    envelope.update(overrides)
    return envelope


def test_list_envelope_with_a_bad_item():
    good = fixture("refund")
    bad = {**fixture("refund"), "amount": "100"}
    problems = check_stripe_object(_refund_list(good, bad))
    assert problems == ["list.data[1].amount: expected integer, got string ('100')"]


def test_list_envelope_fields_are_checked():
    problems = check_stripe_object(_refund_list(has_more="no", url=None, total=3))
    assert "list.has_more: expected boolean, got string ('no')" in problems
    assert "list.url: expected string, got null (None)" in problems
    assert "list.total: unexpected field in a list envelope" in problems
    missing = {"object": "list", "data": []}
    assert any(p.startswith("list.has_more: missing") for p in check_stripe_object(missing))
    assert any(p.startswith("list.url: missing") for p in check_stripe_object(missing))
    not_array = _refund_list()
    not_array["data"] = {"0": fixture("refund")}
    assert check_stripe_object(not_array) == ["list.data: expected array, got object"]


def test_list_items_of_the_wrong_resource():
    envelope = _refund_list(fixture("refund"), fixture("charge"))
    assert check_stripe_object(envelope) == []  # each item is checked as its own resource
    assert check_stripe_object(envelope, "refund") == [
        "list.data[1].object: expected a 'refund' object, got 'charge'"
    ]


def test_explicit_resource_must_match_object():
    assert check_stripe_object(fixture("refund"), "charge") == [
        "charge.object: expected a 'charge' object, got 'refund'"
    ]


def test_unknown_resource_and_non_objects():
    assert check_stripe_object({"object": "widget", "id": "w_1"}) == [
        "widget: unknown Stripe resource 'widget' (no 2026 fixture, no 2023 schema)"
    ]
    assert check_stripe_object({"id": "x"}) == [
        "object: no 'object' field and no resource given, cannot check"
    ]
    assert check_stripe_object(["refund"]) == ["object: expected a JSON object, got array"]


def test_every_problem_is_reported_at_once():
    refund = fixture("refund")
    refund["amount"] = "1"
    refund["reason"] = "bored"
    del refund["status"]
    refund["extra"] = 1
    problems = check_stripe_object(refund)
    assert len(problems) == 4, problems
    with pytest.raises(AssertionError) as err:
        assert_stripe_object(refund)
    message = str(err.value)
    assert message.startswith("4 problem(s) with Stripe refund object:")
    for field in ("refund.amount", "refund.reason", "refund.status", "refund.extra"):
        assert field in message


def test_missing_replacement_mentions_the_2023_field():
    promo = fixture("promotion_code")
    del promo["promotion"]
    promo["coupon"] = fixture("coupon")
    assert check_stripe_object(promo) == [
        "promotion_code.promotion: missing (present in the 2026 fixture; "
        "it replaced the 2023 field 'coupon')"
    ]


def test_documented_fields_outside_both_files_are_type_checked():
    refund = fixture("refund")
    assert check_stripe_object({**refund, "pending_reason": "insufficient_funds"}) == []
    problems = check_stripe_object({**refund, "pending_reason": "eventually"})
    assert any(p.startswith("refund.pending_reason") for p in problems), problems
    endpoint = fixture("webhook_endpoint")
    assert check_stripe_object({**endpoint, "secret": "whsec_abc"}) == []
    assert check_stripe_object({**endpoint, "secret": 5}) != []
