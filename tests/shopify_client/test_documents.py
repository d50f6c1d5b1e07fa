"""The GraphQL documents against Shopify's published 2026-04 schema, and the readers
against answers shaped as Shopify sends them.

The schema file (3.4 MB) is read from the shared specs folder beside the checkout and
built once per run (``conformance.published_schema``, the ``schema`` fixture). Without it
these schema tests skip, naming the folder; with ``CASEWARD_STRICT_TESTS=1`` the skip is a
failure.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import pytest
from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLSchema,
    InlineFragmentNode,
    IntValueNode,
    OperationDefinitionNode,
    SelectionSetNode,
    VariableNode,
    get_named_type,
    is_leaf_type,
    parse,
    validate,
)
from graphql.execution.values import get_variable_values

from integrations.shopify import documents
from integrations.shopify.documents import (
    DOCUMENTS,
    CodeDiscount,
    discount_code_variables,
    read_customer_store_credit,
    read_customer_with_orders,
    read_discount_by_code,
    read_order_for_refund,
    read_refund_create,
    read_shop,
    read_store_credit_credit,
    read_suggested_refund,
    refund_create_variables,
    store_credit_variables,
)
from integrations.shopify.errors import ShopifyOutcomeUnknown
from integrations.shopify.money import (
    Amount,
    ShopifyMoneyError,
    to_decimal_string,
    to_minor_units,
)

# Shopify refuses a single query whose requested cost exceeds 1,000 points.
MAX_SINGLE_QUERY_COST = 1000


# ---------------------------------------------------------------- documents


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_each_document_is_valid_against_the_published_schema(
    schema: GraphQLSchema, name: str
) -> None:
    document = parse(DOCUMENTS[name])

    assert validate(schema, document) == []
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    assert [op.name.value for op in operations if op.name] == [name]


def test_the_check_would_catch_a_misplaced_idempotency_directive(schema: GraphQLSchema) -> None:
    """@idempotent is declared ``on FIELD``: on the operation, the validator refuses it."""
    misplaced = documents.REFUND_CREATE.replace(
        "mutation RefundCreate($input: RefundInput!, $key: String!)",
        "mutation RefundCreate($input: RefundInput!, $key: String!) @idempotent(key: $key)",
    ).replace("refundCreate(input: $input) @idempotent(key: $key)", "refundCreate(input: $input)")

    assert validate(schema, parse(misplaced)) != []


def test_the_refund_mutation_carries_the_idempotency_key_on_its_field() -> None:
    operation = _operation(parse(documents.REFUND_CREATE))
    (field,) = operation.selection_set.selections
    assert isinstance(field, FieldNode)
    (directive,) = field.directives
    (argument,) = directive.arguments

    assert (field.name.value, directive.name.value, argument.name.value) == (
        "refundCreate",
        "idempotent",
        "key",
    )
    assert isinstance(argument.value, VariableNode)
    assert argument.value.name.value == "key"


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_each_document_stays_under_the_single_query_cost_limit(
    schema: GraphQLSchema, name: str
) -> None:
    assert _requested_cost(schema, parse(DOCUMENTS[name])) < MAX_SINGLE_QUERY_COST


def test_the_write_variables_are_accepted_by_the_schema(schema: GraphQLSchema) -> None:
    cases = {
        "RefundCreate": refund_create_variables(
            key="caseward-action-7",
            order_id="gid://shopify/Order/1",
            parent_transaction_id="gid://shopify/OrderTransaction/11",
            gateway="stripe",
            amount=Amount(1250, "kwd"),
            line_items=[("gid://shopify/LineItem/3", 1)],
            note="Damaged in transit",
        ),
        "StoreCreditAccountCredit": store_credit_variables(
            customer_id="gid://shopify/Customer/5", amount=Amount(500, "jpy")
        ),
        "DiscountCodeBasicCreate": discount_code_variables(
            code="CW-7",
            title="Caseward case 7",
            customer_id="gid://shopify/Customer/5",
            starts_at=datetime(2026, 4, 20, tzinfo=UTC),
            amount=Amount(1000, "usd"),
        ),
    }
    for name, variables in cases.items():
        operation = _operation(parse(DOCUMENTS[name]))
        coerced = get_variable_values(schema, operation.variable_definitions, variables)
        assert isinstance(coerced, dict), (name, coerced)

    refund = cases["RefundCreate"]["input"]
    assert refund["transactions"][0]["amount"] == "1.250"
    assert refund["currency"] == "KWD"
    assert cases["StoreCreditAccountCredit"]["creditInput"]["creditAmount"] == {
        "amount": "500",
        "currencyCode": "JPY",
    }


# ---------------------------------------------------------------- money


@pytest.mark.parametrize(
    ("text", "currency", "minor"),
    [
        ("48.00", "USD", 4800),
        ("48.0", "USD", 4800),
        ("0.01", "EUR", 1),
        ("500", "JPY", 500),
        ("500.00", "JPY", 500),
        ("1.250", "KWD", 1250),
        ("12000", "KRW", 12000),
        ("-3.50", "GBP", -350),
    ],
)
def test_decimal_strings_become_minor_units(text: str, currency: str, minor: int) -> None:
    assert to_minor_units(text, currency) == minor
    assert to_minor_units(to_decimal_string(minor, currency), currency) == minor


@pytest.mark.parametrize(
    ("text", "currency"),
    [("48.005", "USD"), ("1.5", "JPY"), ("1.2345", "KWD"), ("1e3", "USD"), ("10", "XXX")],
)
def test_amounts_that_are_not_exact_money_are_refused(text: str, currency: str) -> None:
    with pytest.raises(ShopifyMoneyError):
        to_minor_units(text, currency)


# ---------------------------------------------------------------- readers


def bag(amount: str, currency: str = "USD") -> dict[str, Any]:
    return {"shopMoney": {"amount": amount, "currencyCode": currency}}


def transaction(
    id_: int, kind: str, amount: str, *, parent: int | None = None, payment_id: str | None = None
) -> dict[str, Any]:
    return {
        "id": f"gid://shopify/OrderTransaction/{id_}",
        "kind": kind,
        "status": "SUCCESS",
        "gateway": "stripe",
        "paymentId": payment_id,
        "processedAt": "2026-04-02T09:00:00Z",
        "createdAt": "2026-04-02T09:00:00Z",
        "parentTransaction": (
            None if parent is None else {"id": f"gid://shopify/OrderTransaction/{parent}"}
        ),
        "amountSet": bag(amount),
    }


def order_answer(*, more_lines: bool = False) -> dict[str, Any]:
    return {
        "order": {
            "id": "gid://shopify/Order/1001",
            "name": "#1001",
            "createdAt": "2026-04-02T08:59:00Z",
            "cancelledAt": None,
            "test": False,
            "currencyCode": "USD",
            "presentmentCurrencyCode": "USD",
            "displayFinancialStatus": "PARTIALLY_REFUNDED",
            "customer": {"id": "gid://shopify/Customer/5"},
            "totalPriceSet": bag("48.00"),
            "totalReceivedSet": bag("48.00"),
            "totalRefundedSet": bag("12.00"),
            "lineItems": {
                "nodes": [
                    {
                        "id": "gid://shopify/LineItem/3",
                        "title": "Mug",
                        "quantity": 2,
                        "refundableQuantity": 1,
                        "originalUnitPriceSet": bag("15.00"),
                        "discountedUnitPriceAfterAllDiscountsSet": bag("12.00"),
                    }
                ],
                "pageInfo": {"hasNextPage": more_lines},
            },
            "transactions": [
                transaction(11, "SALE", "48.00", payment_id="pi_3PqMug2eZvKYlo2C1"),
                transaction(12, "REFUND", "12.00", parent=11),
            ],
            "refunds": [
                {
                    "id": "gid://shopify/Refund/9",
                    "createdAt": "2026-04-05T10:00:00Z",
                    "note": "One mug broken",
                    "totalRefundedSet": bag("12.00"),
                    "refundLineItems": {
                        "nodes": [
                            {
                                "lineItem": {"id": "gid://shopify/LineItem/3"},
                                "quantity": 1,
                                "subtotalSet": bag("12.00"),
                            }
                        ],
                        "pageInfo": {"hasNextPage": False},
                    },
                    "transactions": {
                        "nodes": [transaction(12, "REFUND", "12.00", parent=11)],
                        "pageInfo": {"hasNextPage": False},
                    },
                }
            ],
            "fulfillments": [
                {
                    "id": "gid://shopify/Fulfillment/4",
                    "status": "SUCCESS",
                    "displayStatus": "DELIVERED",
                    "createdAt": "2026-04-03T12:00:00Z",
                    "deliveredAt": "2026-04-04T15:30:00Z",
                }
            ],
        }
    }


def test_an_order_is_read_in_minor_units_with_its_payment_id() -> None:
    order = read_order_for_refund(order_answer())

    assert order is not None
    assert (order.name, order.currency, order.customer_id) == (
        "#1001",
        "usd",
        "gid://shopify/Customer/5",
    )
    assert (order.total, order.total_refunded) == (Amount(4800, "usd"), Amount(1200, "usd"))
    (line,) = order.lines
    assert (line.quantity, line.refundable_quantity, line.unit_price_paid) == (
        2,
        1,
        Amount(1200, "usd"),
    )
    sale, refund_txn = order.transactions
    assert (sale.kind, sale.payment_id, sale.parent_id) == ("SALE", "pi_3PqMug2eZvKYlo2C1", None)
    assert refund_txn.parent_id == sale.id
    (refund,) = order.refunds
    assert [(r.line_item_id, r.quantity, r.subtotal) for r in refund.lines] == [
        ("gid://shopify/LineItem/3", 1, Amount(1200, "usd"))
    ]
    assert order.fulfillments[0].delivered_at == datetime(2026, 4, 4, 15, 30, tzinfo=UTC)
    assert order.complete


def test_an_order_with_more_lines_than_were_read_says_it_is_incomplete() -> None:
    order = read_order_for_refund(order_answer(more_lines=True))

    assert order is not None and not order.complete


def test_missing_things_are_none() -> None:
    assert read_order_for_refund({"order": None}) is None
    assert read_customer_with_orders({"customer": None}) is None
    assert read_suggested_refund({"order": None}) is None
    assert read_discount_by_code({"codeDiscountNodeByCode": None}) is None


def test_an_answer_of_another_shape_is_not_trusted() -> None:
    answer = order_answer()
    del answer["order"]["totalRefundedSet"]

    with pytest.raises(ShopifyOutcomeUnknown, match="read_order_for_refund"):
        read_order_for_refund(answer)


def test_a_customer_with_a_page_of_orders() -> None:
    customer = read_customer_with_orders(
        {
            "customer": {
                "id": "gid://shopify/Customer/5",
                "firstName": "Ada",
                "lastName": None,
                "displayName": "Ada",
                "state": "ENABLED",
                "defaultEmailAddress": {"emailAddress": "ada@example.com"},
                "orders": {
                    "nodes": [
                        {
                            "id": "gid://shopify/Order/1002",
                            "name": "#1002",
                            "createdAt": "2026-04-10T08:00:00Z",
                            "currencyCode": "JPY",
                            "displayFinancialStatus": "PAID",
                            "totalPriceSet": bag("4800", "JPY"),
                        }
                    ],
                    "pageInfo": {"hasNextPage": True, "endCursor": "eyJsYXN0X2lkIjoxMDAyfQ=="},
                },
            }
        }
    )

    assert customer is not None
    assert (customer.email, customer.last_name) == ("ada@example.com", None)
    assert customer.orders[0].total == Amount(4800, "jpy")
    assert (customer.has_more_orders, customer.orders_cursor) == (True, "eyJsYXN0X2lkIjoxMDAyfQ==")


def test_a_suggested_refund() -> None:
    suggested = read_suggested_refund(
        {
            "order": {
                "id": "gid://shopify/Order/1001",
                "suggestedRefund": {
                    "amountSet": bag("12.000", "KWD"),
                    "maximumRefundableSet": bag("36.000", "KWD"),
                    "subtotalSet": bag("12.000", "KWD"),
                    "totalTaxSet": bag("0.000", "KWD"),
                    "shipping": {
                        "amountSet": bag("0.000", "KWD"),
                        "maximumRefundableSet": bag("2.500", "KWD"),
                    },
                    "refundLineItems": [
                        {
                            "lineItem": {"id": "gid://shopify/LineItem/3"},
                            "quantity": 1,
                            "subtotalSet": bag("12.000", "KWD"),
                        }
                    ],
                    "suggestedTransactions": [
                        {
                            "gateway": "stripe",
                            "kind": "SUGGESTED_REFUND",
                            "parentTransaction": {"id": "gid://shopify/OrderTransaction/11"},
                            "amountSet": bag("12.000", "KWD"),
                            "maximumRefundableSet": bag("36.000", "KWD"),
                        }
                    ],
                },
            }
        }
    )

    assert suggested is not None
    assert suggested.maximum_refundable == Amount(36000, "kwd")
    assert suggested.shipping_maximum_refundable == Amount(2500, "kwd")
    (suggestion,) = suggested.transactions
    assert (suggestion.parent_id, suggestion.amount) == (
        "gid://shopify/OrderTransaction/11",
        Amount(12000, "kwd"),
    )


def test_write_payloads() -> None:
    refund = read_refund_create({"refund": order_answer()["order"]["refunds"][0]})
    credit = read_store_credit_credit(
        {
            "storeCreditAccountTransaction": {
                "id": "gid://shopify/StoreCreditAccountCreditTransaction/8",
                "createdAt": "2026-04-20T10:00:00Z",
                "expiresAt": None,
                "amount": {"amount": "500", "currencyCode": "JPY"},
                "balanceAfterTransaction": {"amount": "1500", "currencyCode": "JPY"},
                "account": {"id": "gid://shopify/StoreCreditAccount/2"},
            }
        }
    )

    assert (refund.id, refund.total_refunded) == ("gid://shopify/Refund/9", Amount(1200, "usd"))
    assert (credit.amount, credit.balance_after) == (Amount(500, "jpy"), Amount(1500, "jpy"))


def test_store_credit_accounts_list_only_credits() -> None:
    answer = read_customer_store_credit(
        {
            "customer": {
                "id": "gid://shopify/Customer/5",
                "storeCreditAccounts": {
                    "nodes": [
                        {
                            "id": "gid://shopify/StoreCreditAccount/2",
                            "balance": {"amount": "15.00", "currencyCode": "USD"},
                            "transactions": {
                                "nodes": [
                                    {
                                        "__typename": "StoreCreditAccountDebitTransaction",
                                        "createdAt": "2026-04-21T10:00:00Z",
                                        "amount": {"amount": "-5.00", "currencyCode": "USD"},
                                        "balanceAfterTransaction": {
                                            "amount": "15.00",
                                            "currencyCode": "USD",
                                        },
                                    },
                                    {
                                        "__typename": "StoreCreditAccountCreditTransaction",
                                        "id": "gid://shopify/StoreCreditAccountCreditTransaction/8",
                                        "expiresAt": None,
                                        "createdAt": "2026-04-20T10:00:00Z",
                                        "amount": {"amount": "20.00", "currencyCode": "USD"},
                                        "balanceAfterTransaction": {
                                            "amount": "20.00",
                                            "currencyCode": "USD",
                                        },
                                    },
                                ]
                            },
                        }
                    ]
                },
            }
        }
    )

    assert answer is not None
    (account,) = answer.accounts
    assert account.balance == Amount(1500, "usd")
    assert [credit.amount for credit in account.credits] == [Amount(2000, "usd")]


def test_a_code_discount() -> None:
    discount = read_discount_by_code(
        {
            "codeDiscountNodeByCode": {
                "id": "gid://shopify/DiscountCodeNode/77",
                "codeDiscount": {
                    "__typename": "DiscountCodeBasic",
                    "title": "Caseward case 7",
                    "status": "ACTIVE",
                    "startsAt": "2026-04-20T00:00:00Z",
                    "endsAt": None,
                    "createdAt": "2026-04-20T00:00:01Z",
                    "usageLimit": 1,
                    "appliesOncePerCustomer": True,
                    "codes": {"nodes": [{"code": "CW-7"}]},
                    "customerGets": {
                        "value": {"__typename": "DiscountPercentage", "percentage": 0.1}
                    },
                },
            }
        }
    )

    assert discount == CodeDiscount(
        id="gid://shopify/DiscountCodeNode/77",
        kind="DiscountCodeBasic",
        title="Caseward case 7",
        code="CW-7",
        status="ACTIVE",
        starts_at=datetime(2026, 4, 20, tzinfo=UTC),
        ends_at=None,
        created_at=datetime(2026, 4, 20, 0, 0, 1, tzinfo=UTC),
        usage_limit=1,
        applies_once_per_customer=True,
        percentage=0.1,
        amount=None,
    )


def test_the_shop() -> None:
    shop = read_shop(
        {
            "shop": {
                "id": "gid://shopify/Shop/1",
                "name": "Demo",
                "myshopifyDomain": "demo.myshopify.com",
                "currencyCode": "EUR",
                "email": "owner@example.com",
                "ianaTimezone": "Europe/Berlin",
            }
        }
    )

    assert (shop.domain, shop.currency) == ("demo.myshopify.com", "eur")


# ---------------------------------------------------------------- helpers


def _operation(document: DocumentNode) -> OperationDefinitionNode:
    (operation,) = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    return operation


def _requested_cost(schema: GraphQLSchema, document: DocumentNode) -> int:
    """Shopify's published cost rules: scalars and enums 0, objects 1, a connection 2
    plus ``first`` times one node, a list field with ``first`` that many items, a
    mutation 10. Page sizes given as variables count as 50."""
    fragments = {
        d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
    }
    operation = _operation(document)
    root = schema.mutation_type if operation.operation.value == "mutation" else schema.query_type
    assert root is not None
    base = 10 if operation.operation.value == "mutation" else 0
    return base + _selection_cost(schema, operation.selection_set, root, fragments)


def _selection_cost(
    schema: GraphQLSchema,
    selection_set: SelectionSetNode,
    parent: Any,
    fragments: Mapping[str, FragmentDefinitionNode],
) -> int:
    total = 0
    for node in selection_set.selections:
        if isinstance(node, InlineFragmentNode):
            condition = node.type_condition
            inner = schema.get_type(condition.name.value) if condition else parent
            total += _selection_cost(schema, node.selection_set, inner, fragments)
        elif isinstance(node, FragmentSpreadNode):
            fragment = fragments[node.name.value]
            inner = schema.get_type(fragment.type_condition.name.value)
            total += _selection_cost(schema, fragment.selection_set, inner, fragments)
        elif isinstance(node, FieldNode) and node.name.value != "__typename":
            field_type = get_named_type(parent.fields[node.name.value].type)
            if is_leaf_type(field_type) or node.selection_set is None:
                continue
            first = next(
                (
                    int(arg.value.value) if isinstance(arg.value, IntValueNode) else 50
                    for arg in node.arguments
                    if arg.name.value in ("first", "last")
                ),
                None,
            )
            if field_type.name.endswith("Connection"):
                per_node = sum(
                    1 + _selection_cost(schema, child.selection_set, item_type, fragments)
                    for child in node.selection_set.selections
                    if isinstance(child, FieldNode)
                    and child.name.value in ("nodes", "edges")
                    and child.selection_set is not None
                    for item_type in [get_named_type(field_type.fields[child.name.value].type)]
                )
                total += 2 + (first or 1) * per_node
            else:
                inner_cost = 1 + _selection_cost(schema, node.selection_set, field_type, fragments)
                total += (first or 1) * inner_cost
    return total
