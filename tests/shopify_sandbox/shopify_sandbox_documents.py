"""The Admin GraphQL documents the Shopify sandbox tests send.

Every document here is checked against Shopify's published 2026-04 schema
(``test_shopify_sandbox_conformance.py``); abstract types select ``__typename`` so an
answer can be checked against that schema too.
"""

from __future__ import annotations

MONEY = """
fragment Money on MoneyBag {
  shopMoney { amount currencyCode }
  presentmentMoney { amount currencyCode }
}
"""

TRANSACTION = """
fragment Tx on OrderTransaction {
  id
  kind
  status
  gateway
  formattedGateway
  paymentId
  receiptJson
  test
  createdAt
  processedAt
  parentTransaction { id }
  amountSet { ...Money }
  maximumRefundableV2 { amount currencyCode }
}
"""

REFUND = """
fragment RefundFields on Refund {
  id
  legacyResourceId
  createdAt
  processedAt
  note
  totalRefundedSet { ...Money }
  refundLineItems(first: 5) {
    nodes {
      id
      quantity
      restockType
      restocked
      lineItem { id title }
      priceSet { ...Money }
      subtotalSet { ...Money }
      totalTaxSet { ...Money }
    }
    pageInfo { hasNextPage }
  }
  transactions(first: 3) {
    nodes { ...Tx }
    pageInfo { hasNextPage }
  }
}
"""

SHOP = """
query Shop {
  shop { id name email contactEmail currencyCode myshopifyDomain ianaTimezone createdAt }
}
"""

CUSTOMER = (
    """
query CustomerWithOrders($id: ID!, $first: Int!, $after: String) {
  customer(id: $id) {
    id
    legacyResourceId
    email
    firstName
    lastName
    displayName
    state
    createdAt
    numberOfOrders
    defaultEmailAddress { emailAddress }
    amountSpent { amount currencyCode }
    orders(first: $first, after: $after, sortKey: CREATED_AT, reverse: true) {
      edges { cursor node { id } }
      nodes {
        id
        name
        createdAt
        currencyCode
        displayFinancialStatus
        totalPriceSet { ...Money }
      }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    }
  }
}
"""
    + MONEY
)

ORDER = (
    """
query Order($id: ID!) {
  order(id: $id) {
    id
    legacyResourceId
    name
    number
    email
    test
    createdAt
    updatedAt
    processedAt
    cancelledAt
    currencyCode
    presentmentCurrencyCode
    displayFinancialStatus
    displayFulfillmentStatus
    paymentGatewayNames
    refundable
    customer { id displayName }
    totalPriceSet { ...Money }
    subtotalPriceSet { ...Money }
    totalShippingPriceSet { ...Money }
    totalReceivedSet { ...Money }
    totalRefundedSet { ...Money }
    totalRefundedShippingSet { ...Money }
    netPaymentSet { ...Money }
    totalOutstandingSet { ...Money }
    currentTotalPriceSet { ...Money }
    lineItems(first: 5) {
      nodes {
        id
        title
        name
        sku
        quantity
        currentQuantity
        refundableQuantity
        unfulfilledQuantity
        originalUnitPriceSet { ...Money }
        discountedUnitPriceAfterAllDiscountsSet { ...Money }
        discountedTotalSet { ...Money }
      }
      pageInfo { hasNextPage endCursor }
    }
    transactions(first: 5) { ...Tx }
    refunds(first: 3) { ...RefundFields }
    fulfillments(first: 5) {
      id
      name
      status
      displayStatus
      createdAt
      deliveredAt
      totalQuantity
    }
  }
}
"""
    + MONEY
    + TRANSACTION
    + REFUND
)

SUGGESTED_REFUND = (
    """
query SuggestedRefund(
  $id: ID!
  $refundLineItems: [RefundLineItemInput!]
  $refundShipping: Boolean
  $shippingAmount: Money
  $suggestFullRefund: Boolean
) {
  order(id: $id) {
    id
    suggestedRefund(
      refundLineItems: $refundLineItems
      refundShipping: $refundShipping
      shippingAmount: $shippingAmount
      suggestFullRefund: $suggestFullRefund
    ) {
      amountSet { ...Money }
      maximumRefundableSet { ...Money }
      subtotalSet { ...Money }
      discountedSubtotalSet { ...Money }
      totalTaxSet { ...Money }
      totalCartDiscountAmountSet { ...Money }
      totalDutiesSet { ...Money }
      shipping {
        amountSet { ...Money }
        maximumRefundableSet { ...Money }
        taxSet { ...Money }
      }
      refundLineItems {
        id
        quantity
        restockType
        lineItem { id }
        subtotalSet { ...Money }
      }
      suggestedTransactions {
        kind
        gateway
        formattedGateway
        parentTransaction { id }
        amountSet { ...Money }
        maximumRefundableSet { ...Money }
      }
    }
  }
}
"""
    + MONEY
)

REFUND_CREATE = (
    """
mutation RefundCreate($input: RefundInput!, $key: String!) {
  refundCreate(input: $input) @idempotent(key: $key) {
    refund { ...RefundFields }
    order { id displayFinancialStatus totalRefundedSet { ...Money } }
    userErrors { field message }
  }
}
"""
    + MONEY
    + TRANSACTION
    + REFUND
)

REFUND_CREATE_WITHOUT_KEY = """
mutation RefundCreateWithoutKey($input: RefundInput!) {
  refundCreate(input: $input) {
    refund { id }
    userErrors { field message }
  }
}
"""

STORE_CREDIT = """
mutation StoreCreditAccountCredit($id: ID!, $creditInput: StoreCreditAccountCreditInput!) {
  storeCreditAccountCredit(id: $id, creditInput: $creditInput) {
    storeCreditAccountTransaction {
      id
      createdAt
      expiresAt
      event
      amount { amount currencyCode }
      remainingAmount { amount currencyCode }
      balanceAfterTransaction { amount currencyCode }
      account { id balance { amount currencyCode } }
    }
    userErrors { field message code }
  }
}
"""

CUSTOMER_STORE_CREDIT = """
query CustomerStoreCredit($id: ID!) {
  customer(id: $id) {
    id
    storeCreditAccounts(first: 5) {
      nodes {
        id
        balance { amount currencyCode }
        transactions(first: 10, sortKey: CREATED_AT, reverse: true) {
          nodes {
            __typename
            createdAt
            event
            amount { amount currencyCode }
            balanceAfterTransaction { amount currencyCode }
            ... on StoreCreditAccountCreditTransaction { id expiresAt }
          }
        }
      }
    }
  }
}
"""

CODE_DISCOUNT = """
fragment CodeDiscount on DiscountCodeNode {
  id
  codeDiscount {
    __typename
    ... on DiscountCodeBasic {
      title
      status
      summary
      shortSummary
      startsAt
      endsAt
      createdAt
      usageLimit
      appliesOncePerCustomer
      asyncUsageCount
      tags
      codes(first: 1) { nodes { id code } }
      combinesWith { orderDiscounts productDiscounts shippingDiscounts }
      customerGets {
        appliesOnOneTimePurchase
        value {
          __typename
          ... on DiscountAmount { amount { amount currencyCode } appliesOnEachItem }
          ... on DiscountPercentage { percentage }
        }
        items { __typename ... on AllDiscountItems { allItems } }
      }
      context {
        __typename
        ... on DiscountBuyerSelectionAll { all }
        ... on DiscountCustomers { customers { id } }
      }
      minimumRequirement {
        __typename
        ... on DiscountMinimumSubtotal { greaterThanOrEqualToSubtotal { amount currencyCode } }
        ... on DiscountMinimumQuantity { greaterThanOrEqualToQuantity }
      }
    }
  }
}
"""

DISCOUNT_CREATE = (
    """
mutation DiscountCodeBasicCreate($basicCodeDiscount: DiscountCodeBasicInput!) {
  discountCodeBasicCreate(basicCodeDiscount: $basicCodeDiscount) {
    codeDiscountNode { ...CodeDiscount }
    userErrors { field message code extraInfo }
  }
}
"""
    + CODE_DISCOUNT
)

DISCOUNT_BY_CODE = (
    """
query DiscountByCode($code: String!) {
  codeDiscountNodeByCode(code: $code) { ...CodeDiscount }
}
"""
    + CODE_DISCOUNT
)

#: Every valid document the tests send, by operation name.
DOCUMENTS = {
    "Shop": SHOP,
    "CustomerWithOrders": CUSTOMER,
    "Order": ORDER,
    "SuggestedRefund": SUGGESTED_REFUND,
    "RefundCreate": REFUND_CREATE,
    "RefundCreateWithoutKey": REFUND_CREATE_WITHOUT_KEY,
    "StoreCreditAccountCredit": STORE_CREDIT,
    "CustomerStoreCredit": CUSTOMER_STORE_CREDIT,
    "DiscountCodeBasicCreate": DISCOUNT_CREATE,
    "DiscountByCode": DISCOUNT_BY_CODE,
}
