"""The sandbox speaks Shopify's published schema: its own schema is a subset, every
document the tests send validates, and its answers fit (``conformance.py``)."""

from __future__ import annotations

import httpx
import pytest
from conformance import answer_problems, assert_conforms, require_published_schema
from graphql import (
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLInterfaceType,
    GraphQLObjectType,
    GraphQLUnionType,
    Undefined,
    is_non_null_type,
)
from shopify_sandbox_documents import DOCUMENTS, ORDER, SUGGESTED_REFUND
from shopify_sandbox_support import Seeded, graphql

from integrations.shopify.sandbox import SandboxShop
from integrations.shopify.sandbox.schema import build


def test_the_sandbox_schema_is_a_subset_of_shopifys() -> None:
    """Every type, field, argument, enum value and union member the sandbox declares is
    Shopify's, with the same type; no argument or input field Shopify requires is left
    out. So a document valid here is valid at Shopify."""
    published = require_published_schema()
    problems: list[str] = []
    for name, ours in build().type_map.items():
        if name.startswith("__"):
            continue
        theirs = published.type_map.get(name)
        if theirs is None or type(theirs) is not type(ours):
            problems.append(f"type {name}")
            continue
        if isinstance(ours, GraphQLObjectType | GraphQLInterfaceType):
            assert isinstance(theirs, GraphQLObjectType | GraphQLInterfaceType)
            their_interfaces = {i.name for i in theirs.interfaces}
            problems += [
                f"{name} implements {i.name}"
                for i in ours.interfaces
                if i.name not in their_interfaces
            ]
            for field_name, field in ours.fields.items():
                their_field = theirs.fields.get(field_name)
                if their_field is None or str(their_field.type) != str(field.type):
                    problems.append(f"field {name}.{field_name}")
                    continue
                for arg, value in field.args.items():
                    their_arg = their_field.args.get(arg)
                    if their_arg is None or str(their_arg.type) != str(value.type):
                        problems.append(f"argument {name}.{field_name}({arg})")
                problems += [
                    f"required argument {name}.{field_name}({arg}) missing"
                    for arg, value in their_field.args.items()
                    if is_non_null_type(value.type) and arg not in field.args
                ]
        elif isinstance(ours, GraphQLInputObjectType):
            assert isinstance(theirs, GraphQLInputObjectType)
            for field_name, field in ours.fields.items():
                their_field = theirs.fields.get(field_name)
                if their_field is None or str(their_field.type) != str(field.type):
                    problems.append(f"input field {name}.{field_name}")
            problems += [
                f"required input field {name}.{field_name} missing"
                for field_name, field in theirs.fields.items()
                if is_non_null_type(field.type)
                and field.default_value is Undefined
                and field_name not in ours.fields
            ]
        elif isinstance(ours, GraphQLEnumType):
            assert isinstance(theirs, GraphQLEnumType)
            problems += [f"enum value {name}.{v}" for v in ours.values if v not in theirs.values]
        elif isinstance(ours, GraphQLUnionType):
            assert isinstance(theirs, GraphQLUnionType)
            members = {t.name for t in theirs.types}
            problems += [
                f"union member {name}.{t.name}" for t in ours.types if t.name not in members
            ]
    idempotent = published.get_directive("idempotent")
    assert idempotent is not None and build().get_directive("idempotent") is not None
    assert problems == []


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_every_document_the_tests_send_is_valid_at_shopify(name: str) -> None:
    require_published_schema()
    assert_conforms(DOCUMENTS[name], {})


def test_a_seeded_order_and_its_suggested_refund_fit_shopifys_schema(
    client: httpx.Client, shop: SandboxShop, token: str, seeded: Seeded
) -> None:
    order = graphql(client, shop.domain, token, ORDER, {"id": seeded.order}).json()
    assert_conforms(ORDER, order, variables={"id": seeded.order})
    variables = {"id": seeded.order, "suggestFullRefund": True}
    suggestion = graphql(client, shop.domain, token, SUGGESTED_REFUND, variables).json()
    assert_conforms(SUGGESTED_REFUND, suggestion, variables=variables)


def test_the_check_catches_an_answer_shopify_could_not_give() -> None:
    """The conformance check itself bites: a wrong enum, a null in a non-null field, an
    amount as a number and a misspelt field are each reported."""
    require_published_schema()
    document = """
    query {
      order(id: "gid://shopify/Order/1") {
        id
        displayFinancialStatus
        totalPriceSet { shopMoney { amount currencyCode } }
      }
    }
    """
    good = {
        "order": {
            "id": "gid://shopify/Order/1",
            "displayFinancialStatus": "PAID",
            "totalPriceSet": {"shopMoney": {"amount": "48.0", "currencyCode": "USD"}},
        }
    }
    assert answer_problems(document, good) == []
    wrong_enum = {"order": {**good["order"], "displayFinancialStatus": "SETTLED"}}
    null_id = {"order": {**good["order"], "id": None}}
    number_amount = {
        "order": {
            **good["order"],
            "totalPriceSet": {"shopMoney": {"amount": 48.0, "currencyCode": "USD"}},
        }
    }
    misspelt = {"order": {"id": "gid://shopify/Order/1", "displayFinancialState": "PAID"}}
    for bad in (wrong_enum, null_id, number_amount, misspelt):
        assert answer_problems(document, bad), bad
