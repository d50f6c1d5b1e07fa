"""Customers and customer balance transactions (store credit)."""

from __future__ import annotations

import pytest
import stripe
from stripe_sandbox_support import raw
from stripe_spec import assert_stripe_object, require_specs

from integrations.stripe.sandbox import AccountKeys


def test_create_retrieve_update_list(client: stripe.StripeClient) -> None:
    jenny = client.v1.customers.create(
        params={"email": "jenny@example.com", "name": "Jenny", "metadata": {"shop": "s1"}}
    )
    assert jenny.id.startswith("cus_")
    assert (jenny.balance, jenny.currency, jenny.livemode) == (0, None, False)
    client.v1.customers.create(params={"email": "other@example.com"})
    updated = client.v1.customers.update(
        jenny.id, params={"name": "Jenny Rosen", "metadata": {"shop": "", "tier": "gold"}}
    )
    assert updated.name == "Jenny Rosen"
    assert updated.metadata.to_dict() == {"tier": "gold"}
    assert client.v1.customers.retrieve(jenny.id).email == "jenny@example.com"
    found = client.v1.customers.list(params={"email": "jenny@example.com"})
    assert [c.id for c in found.data] == [jenny.id]
    events = client.v1.events.list(params={"type": "customer.updated"}).data
    assert events[0].data.previous_attributes.name == "Jenny"


def test_delete_marks_deleted_and_refuses_changes(client: stripe.StripeClient) -> None:
    customer = client.v1.customers.create(params={"email": "gone@example.com"})
    deleted = client.v1.customers.delete(customer.id)
    assert deleted.to_dict() == {"id": customer.id, "object": "customer", "deleted": True}
    again = client.v1.customers.retrieve(customer.id)
    assert again.to_dict().get("deleted") is True
    with pytest.raises(stripe.InvalidRequestError) as refused:
        client.v1.customers.update(customer.id, params={"name": "x"})
    assert (refused.value.http_status, refused.value.code) == (404, "resource_missing")
    with pytest.raises(stripe.InvalidRequestError):
        client.v1.customers.balance_transactions.create(
            customer.id, params={"amount": -100, "currency": "usd"}
        )
    assert client.v1.customers.list().data == []
    with pytest.raises(stripe.InvalidRequestError) as in_param:
        client.v1.payment_intents.create(
            params={"amount": 1000, "currency": "usd", "customer": customer.id}
        )
    assert (in_param.value.http_status, in_param.value.param) == (400, "customer")


def test_balance_transactions_move_the_balance(client: stripe.StripeClient) -> None:
    customer = client.v1.customers.create()
    credit = client.v1.customers.balance_transactions.create(
        customer.id,
        params={
            "amount": -1500,
            "currency": "usd",
            "description": "Goodwill",
            "metadata": {"case": "c1"},
        },
    )
    assert (credit.amount, credit.ending_balance, credit.type) == (-1500, -1500, "adjustment")
    debit = client.v1.customers.balance_transactions.create(
        customer.id, params={"amount": 500, "currency": "usd"}
    )
    assert debit.ending_balance == -1000
    current = client.v1.customers.retrieve(customer.id)
    assert (current.balance, current.currency) == (-1000, "usd")
    history = client.v1.customers.balance_transactions.list(customer.id)
    assert [t.id for t in history.data] == [debit.id, credit.id]
    assert history.url == f"/v1/customers/{customer.id}/balance_transactions"
    fetched = client.v1.customers.balance_transactions.retrieve(customer.id, credit.id)
    assert fetched.metadata["case"] == "c1"
    changed = client.v1.customers.balance_transactions.update(
        customer.id, credit.id, params={"description": "Sorry"}
    )
    assert changed.description == "Sorry"


def test_balance_currency_must_match(client: stripe.StripeClient) -> None:
    customer = client.v1.customers.create()
    client.v1.customers.balance_transactions.create(
        customer.id, params={"amount": -100, "currency": "eur"}
    )
    with pytest.raises(stripe.InvalidRequestError) as refused:
        client.v1.customers.balance_transactions.create(
            customer.id, params={"amount": -100, "currency": "usd"}
        )
    assert refused.value.param == "currency"
    assert "You cannot combine currencies on a single customer" in str(refused.value.user_message)
    assert client.v1.customers.retrieve(customer.id).balance == -100


def test_customer_objects_match_stripe_schema(
    client: stripe.StripeClient, url: str, account: AccountKeys
) -> None:
    require_specs()
    customer = client.v1.customers.create(params={"email": "a@example.com"})
    txn = client.v1.customers.balance_transactions.create(
        customer.id, params={"amount": -100, "currency": "usd"}
    )
    assert_stripe_object(raw(url, "GET", f"/v1/customers/{customer.id}", account.secret_key).json())
    path = f"/v1/customers/{customer.id}/balance_transactions"
    assert_stripe_object(raw(url, "GET", f"{path}/{txn.id}", account.secret_key).json())
    assert_stripe_object(raw(url, "GET", path, account.secret_key).json())
    assert_stripe_object(
        raw(url, "DELETE", f"/v1/customers/{customer.id}", account.secret_key).json()
    )
