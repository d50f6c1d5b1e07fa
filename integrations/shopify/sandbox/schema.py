"""The part of Shopify's Admin GraphQL schema (2026-04) the sandbox serves, written by hand.

Every type, field, argument, enum value and nullability below is spelled exactly as in
Shopify's published schema, and is a subset of it: fields, arguments, enum values, union
members and interfaces may be missing here, nothing may differ. So a document that
validates against this schema also validates against Shopify's (the test suite checks
that property mechanically against the published file), and a client that works here
does not lean on anything Shopify lacks.

Scalars behave as Shopify's: ``DateTime`` must be ISO 8601, ``Decimal`` and ``Money``
are decimal strings (numbers are accepted as input), ``UnsignedInt64`` is written as a
string of digits. :func:`build` parses the SDL once and attaches those behaviours.
"""

from __future__ import annotations

import functools
import re
from datetime import datetime
from typing import Any

from graphql import GraphQLError, GraphQLScalarType, GraphQLSchema, ValueNode, build_schema
from graphql.language import FloatValueNode, IntValueNode, StringValueNode

API_VERSION = "2026-04"

SDL = """
schema {
  query: QueryRoot
  mutation: Mutation
}

directive @idempotent(key: String!) on FIELD

scalar DateTime
scalar Decimal
scalar JSON
scalar Money
scalar UnsignedInt64
scalar URL

type QueryRoot {
  shop: Shop!
  customer(id: ID!): Customer
  customers(
    first: Int
    after: String
    last: Int
    before: String
    reverse: Boolean = false
    sortKey: CustomerSortKeys = ID
    query: String
  ): CustomerConnection!
  order(id: ID!): Order
  orders(
    first: Int
    after: String
    last: Int
    before: String
    reverse: Boolean = false
    sortKey: OrderSortKeys = PROCESSED_AT
    query: String
  ): OrderConnection!
  codeDiscountNodeByCode(code: String!): DiscountCodeNode
  discountNodes(
    first: Int
    after: String
    last: Int
    before: String
    reverse: Boolean = false
    sortKey: DiscountSortKeys = ID
    query: String
  ): DiscountNodeConnection!
  storeCreditAccount(id: ID!): StoreCreditAccount
}

type Mutation {
  refundCreate(input: RefundInput!): RefundCreatePayload
  storeCreditAccountCredit(
    id: ID!
    creditInput: StoreCreditAccountCreditInput!
  ): StoreCreditAccountCreditPayload
  discountCodeBasicCreate(
    basicCodeDiscount: DiscountCodeBasicInput!
  ): DiscountCodeBasicCreatePayload
}

enum CurrencyCode {
  USD EUR GBP CAD AUD NZD CHF SEK NOK DKK ISK PLN CZK HUF RON BGN TRY ILS AED SAR ZAR
  MXN BRL CLP COP PEN INR IDR MYR PHP SGD HKD TWD CNY THB VND JPY KRW BHD JOD KWD OMR TND
}

type PageInfo {
  endCursor: String
  hasNextPage: Boolean!
  hasPreviousPage: Boolean!
  startCursor: String
}

type MoneyV2 {
  amount: Decimal!
  currencyCode: CurrencyCode!
}

type MoneyBag {
  presentmentMoney: MoneyV2!
  shopMoney: MoneyV2!
}

type UserError {
  field: [String!]
  message: String!
}

type Shop {
  contactEmail: String!
  createdAt: DateTime!
  currencyCode: CurrencyCode!
  email: String!
  ianaTimezone: String!
  id: ID!
  myshopifyDomain: String!
  name: String!
}

enum CustomerState {
  DECLINED
  DISABLED
  ENABLED
  INVITED
}

type CustomerEmailAddress {
  emailAddress: String!
}

type Customer {
  amountSpent: MoneyV2!
  createdAt: DateTime!
  defaultEmailAddress: CustomerEmailAddress
  displayName: String!
  email: String @deprecated(reason: "Use `defaultEmailAddress.emailAddress` instead.")
  firstName: String
  id: ID!
  lastName: String
  legacyResourceId: UnsignedInt64!
  numberOfOrders: UnsignedInt64!
  orders(
    first: Int
    after: String
    last: Int
    before: String
    reverse: Boolean = false
    sortKey: OrderSortKeys = ID
  ): OrderConnection!
  state: CustomerState!
  storeCreditAccounts(
    first: Int
    after: String
    last: Int
    before: String
  ): StoreCreditAccountConnection!
  updatedAt: DateTime!
}

enum CustomerSortKeys {
  CREATED_AT
  ID
  UPDATED_AT
}

type CustomerConnection {
  edges: [CustomerEdge!]!
  nodes: [Customer!]!
  pageInfo: PageInfo!
}

type CustomerEdge {
  cursor: String!
  node: Customer!
}

enum OrderSortKeys {
  CREATED_AT
  ID
  ORDER_NUMBER
  PROCESSED_AT
  TOTAL_PRICE
  UPDATED_AT
}

type OrderConnection {
  edges: [OrderEdge!]!
  nodes: [Order!]!
  pageInfo: PageInfo!
}

type OrderEdge {
  cursor: String!
  node: Order!
}

enum OrderDisplayFinancialStatus {
  PENDING
  AUTHORIZED
  PARTIALLY_PAID
  PARTIALLY_REFUNDED
  VOIDED
  PAID
  REFUNDED
  EXPIRED
}

enum OrderDisplayFulfillmentStatus {
  UNFULFILLED
  PARTIALLY_FULFILLED
  FULFILLED
}

enum DisputeStatus {
  ACCEPTED
  LOST
  NEEDS_RESPONSE
  PREVENTED
  UNDER_REVIEW
  WON
}

enum DisputeType {
  CHARGEBACK
  INQUIRY
}

type OrderDisputeSummary {
  id: ID!
  initiatedAs: DisputeType!
  status: DisputeStatus!
}

type Order {
  cancelledAt: DateTime
  createdAt: DateTime!
  currencyCode: CurrencyCode!
  currentTotalPriceSet: MoneyBag!
  customer: Customer
  displayFinancialStatus: OrderDisplayFinancialStatus
  displayFulfillmentStatus: OrderDisplayFulfillmentStatus!
  disputes: [OrderDisputeSummary!]!
  email: String
  fulfillments(first: Int): [Fulfillment!]!
  id: ID!
  legacyResourceId: UnsignedInt64!
  lineItems(
    first: Int
    after: String
    last: Int
    before: String
    reverse: Boolean = false
  ): LineItemConnection!
  name: String!
  netPaymentSet: MoneyBag!
  number: Int!
  paymentGatewayNames: [String!]!
  presentmentCurrencyCode: CurrencyCode!
  processedAt: DateTime!
  refundable: Boolean!
  refunds(first: Int): [Refund!]!
  subtotalPriceSet: MoneyBag
  suggestedRefund(
    shippingAmount: Money
    refundShipping: Boolean
    refundLineItems: [RefundLineItemInput!]
    suggestFullRefund: Boolean = false
  ): SuggestedRefund
  test: Boolean!
  totalOutstandingSet: MoneyBag!
  totalPriceSet: MoneyBag!
  totalReceivedSet: MoneyBag!
  totalRefundedSet: MoneyBag!
  totalRefundedShippingSet: MoneyBag!
  totalShippingPriceSet: MoneyBag!
  transactions(first: Int): [OrderTransaction!]!
  updatedAt: DateTime!
}

type LineItemConnection {
  edges: [LineItemEdge!]!
  nodes: [LineItem!]!
  pageInfo: PageInfo!
}

type LineItemEdge {
  cursor: String!
  node: LineItem!
}

type LineItem {
  currentQuantity: Int!
  discountedTotalSet: MoneyBag!
  discountedUnitPriceAfterAllDiscountsSet: MoneyBag!
  discountedUnitPriceSet: MoneyBag!
  id: ID!
  isGiftCard: Boolean!
  name: String!
  originalTotalSet: MoneyBag!
  originalUnitPriceSet: MoneyBag!
  quantity: Int!
  refundableQuantity: Int!
  requiresShipping: Boolean!
  restockable: Boolean!
  sku: String
  taxable: Boolean!
  title: String!
  totalDiscountSet: MoneyBag!
  unfulfilledQuantity: Int!
  variantTitle: String
}

enum OrderTransactionKind {
  SALE
  CAPTURE
  AUTHORIZATION
  VOID
  REFUND
  CHANGE
  EMV_AUTHORIZATION
  SUGGESTED_REFUND
}

enum OrderTransactionStatus {
  SUCCESS
  FAILURE
  PENDING
  ERROR
  AWAITING_RESPONSE
  UNKNOWN
}

type OrderTransaction {
  amountSet: MoneyBag!
  authorizationCode: String @deprecated(reason: "Use `paymentId` instead.")
  createdAt: DateTime!
  formattedGateway: String
  gateway: String
  id: ID!
  kind: OrderTransactionKind!
  manualPaymentGateway: Boolean!
  maximumRefundableV2: MoneyV2
  order: Order
  parentTransaction: OrderTransaction
  paymentId: String
  processedAt: DateTime
  receiptJson: JSON
  status: OrderTransactionStatus!
  test: Boolean!
}

type OrderTransactionConnection {
  edges: [OrderTransactionEdge!]!
  nodes: [OrderTransaction!]!
  pageInfo: PageInfo!
}

type OrderTransactionEdge {
  cursor: String!
  node: OrderTransaction!
}

enum RefundLineItemRestockType {
  RETURN
  CANCEL
  LEGACY_RESTOCK
  NO_RESTOCK
}

type RefundLineItem {
  id: ID
  lineItem: LineItem!
  priceSet: MoneyBag!
  quantity: Int!
  restockType: RefundLineItemRestockType!
  restocked: Boolean!
  subtotalSet: MoneyBag!
  totalTaxSet: MoneyBag!
}

type RefundLineItemConnection {
  edges: [RefundLineItemEdge!]!
  nodes: [RefundLineItem!]!
  pageInfo: PageInfo!
}

type RefundLineItemEdge {
  cursor: String!
  node: RefundLineItem!
}

type Refund {
  createdAt: DateTime
  id: ID!
  legacyResourceId: UnsignedInt64!
  note: String
  order: Order!
  processedAt: DateTime!
  refundLineItems(
    first: Int
    after: String
    last: Int
    before: String
    reverse: Boolean = false
  ): RefundLineItemConnection!
  totalRefundedSet: MoneyBag!
  transactions(
    first: Int
    after: String
    last: Int
    before: String
    reverse: Boolean = false
  ): OrderTransactionConnection!
  updatedAt: DateTime!
}

enum FulfillmentStatus {
  PENDING @deprecated(reason: "This is a legacy status and is due to be deprecated.")
  OPEN @deprecated(reason: "This is a legacy status and is due to be deprecated.")
  SUCCESS
  CANCELLED
  ERROR
  FAILURE
}

enum FulfillmentDisplayStatus {
  CANCELED
  DELIVERED
  FAILURE
  FULFILLED
  IN_TRANSIT
}

type FulfillmentTrackingInfo {
  company: String
  number: String
  url: URL
}

type Fulfillment {
  createdAt: DateTime!
  deliveredAt: DateTime
  displayStatus: FulfillmentDisplayStatus
  estimatedDeliveryAt: DateTime
  id: ID!
  inTransitAt: DateTime
  legacyResourceId: UnsignedInt64!
  name: String!
  requiresShipping: Boolean!
  status: FulfillmentStatus!
  totalQuantity: Int!
  trackingInfo(first: Int): [FulfillmentTrackingInfo!]!
  updatedAt: DateTime!
}

type ShippingRefund {
  amountSet: MoneyBag!
  maximumRefundableSet: MoneyBag!
  taxSet: MoneyBag!
}

enum SuggestedOrderTransactionKind {
  SUGGESTED_REFUND
}

type SuggestedOrderTransaction {
  amountSet: MoneyBag!
  formattedGateway: String
  gateway: String
  kind: SuggestedOrderTransactionKind!
  maximumRefundableSet: MoneyBag
  parentTransaction: OrderTransaction
}

type SuggestedRefund {
  amountSet: MoneyBag!
  discountedSubtotalSet: MoneyBag!
  maximumRefundableSet: MoneyBag!
  refundLineItems: [RefundLineItem!]!
  shipping: ShippingRefund!
  subtotalSet: MoneyBag!
  suggestedTransactions: [SuggestedOrderTransaction!]!
  totalCartDiscountAmountSet: MoneyBag!
  totalDutiesSet: MoneyBag!
  totalTaxSet: MoneyBag!
}

input RefundLineItemInput {
  lineItemId: ID!
  quantity: Int!
  restockType: RefundLineItemRestockType
  locationId: ID
}

input ShippingRefundInput {
  amount: Money
  fullRefund: Boolean
}

input OrderTransactionInput {
  amount: Money!
  gateway: String!
  kind: OrderTransactionKind!
  orderId: ID!
  parentId: ID
}

input RefundInput {
  currency: CurrencyCode
  orderId: ID!
  note: String
  notify: Boolean
  shipping: ShippingRefundInput
  processedAt: DateTime
  refundLineItems: [RefundLineItemInput!]
  transactions: [OrderTransactionInput!]
  allowOverRefunding: Boolean
}

type RefundCreatePayload {
  order: Order
  refund: Refund
  userErrors: [UserError!]!
}

input MoneyInput {
  amount: Decimal!
  currencyCode: CurrencyCode!
}

input StoreCreditAccountCreditInput {
  creditAmount: MoneyInput!
  expiresAt: DateTime
  notify: Boolean
}

enum StoreCreditSystemEvent {
  ADJUSTMENT
  ORDER_PAYMENT
  ORDER_REFUND
  PAYMENT_FAILURE
  PAYMENT_RETURNED
  ORDER_CANCELLATION
  TAX_FINALIZATION
}

type StoreCreditAccount {
  balance: MoneyV2!
  id: ID!
  transactions(
    first: Int
    after: String
    last: Int
    before: String
    reverse: Boolean = false
    sortKey: TransactionSortKeys = CREATED_AT
    query: String
  ): StoreCreditAccountTransactionConnection!
}

type StoreCreditAccountConnection {
  edges: [StoreCreditAccountEdge!]!
  nodes: [StoreCreditAccount!]!
  pageInfo: PageInfo!
}

type StoreCreditAccountEdge {
  cursor: String!
  node: StoreCreditAccount!
}

enum TransactionSortKeys {
  CREATED_AT
  EXPIRES_AT
}

interface StoreCreditAccountTransaction {
  account: StoreCreditAccount!
  amount: MoneyV2!
  balanceAfterTransaction: MoneyV2!
  createdAt: DateTime!
  event: StoreCreditSystemEvent!
}

type StoreCreditAccountCreditTransaction implements StoreCreditAccountTransaction {
  account: StoreCreditAccount!
  amount: MoneyV2!
  balanceAfterTransaction: MoneyV2!
  createdAt: DateTime!
  event: StoreCreditSystemEvent!
  expiresAt: DateTime
  id: ID!
  remainingAmount: MoneyV2!
}

type StoreCreditAccountTransactionConnection {
  edges: [StoreCreditAccountTransactionEdge!]!
  nodes: [StoreCreditAccountTransaction!]!
  pageInfo: PageInfo!
}

type StoreCreditAccountTransactionEdge {
  cursor: String!
  node: StoreCreditAccountTransaction!
}

enum StoreCreditAccountCreditUserErrorCode {
  ACCOUNT_NOT_FOUND
  OWNER_NOT_FOUND
  NEGATIVE_OR_ZERO_AMOUNT
  MISMATCHING_CURRENCY
  EXPIRES_AT_IN_PAST
  CREDIT_LIMIT_EXCEEDED
  UNSUPPORTED_CURRENCY
}

type StoreCreditAccountCreditUserError {
  code: StoreCreditAccountCreditUserErrorCode
  field: [String!]
  message: String!
}

type StoreCreditAccountCreditPayload {
  storeCreditAccountTransaction: StoreCreditAccountCreditTransaction
  userErrors: [StoreCreditAccountCreditUserError!]!
}

enum DiscountBuyerSelection {
  ALL
}

input DiscountCustomersInput {
  add: [ID!]
  remove: [ID!]
}

input DiscountContextInput {
  all: DiscountBuyerSelection
  customers: DiscountCustomersInput
}

input DiscountCombinesWithInput {
  productDiscounts: Boolean
  orderDiscounts: Boolean
  shippingDiscounts: Boolean
}

input DiscountMinimumQuantityInput {
  greaterThanOrEqualToQuantity: UnsignedInt64
}

input DiscountMinimumSubtotalInput {
  greaterThanOrEqualToSubtotal: Decimal
}

input DiscountMinimumRequirementInput {
  quantity: DiscountMinimumQuantityInput
  subtotal: DiscountMinimumSubtotalInput
}

input DiscountAmountInput {
  amount: Decimal
  appliesOnEachItem: Boolean
}

input DiscountCustomerGetsValueInput {
  percentage: Float
  discountAmount: DiscountAmountInput
}

input DiscountItemsInput {
  all: Boolean
}

input DiscountCustomerGetsInput {
  value: DiscountCustomerGetsValueInput
  items: DiscountItemsInput
  appliesOnOneTimePurchase: Boolean
  appliesOnSubscription: Boolean
}

input DiscountCodeBasicInput {
  combinesWith: DiscountCombinesWithInput
  title: String
  startsAt: DateTime
  endsAt: DateTime
  appliesOncePerCustomer: Boolean
  code: String
  usageLimit: Int
  context: DiscountContextInput
  tags: [String!]
  minimumRequirement: DiscountMinimumRequirementInput
  customerGets: DiscountCustomerGetsInput
}

enum DiscountErrorCode {
  BLANK
  INVALID
  TAKEN
  TOO_LONG
  VALUE_OUTSIDE_RANGE
  END_DATE_BEFORE_START_DATE
  MISSING_ARGUMENT
  TOO_MANY_ARGUMENTS
}

type DiscountUserError {
  code: DiscountErrorCode
  extraInfo: String
  field: [String!]
  message: String!
}

enum DiscountStatus {
  ACTIVE
  EXPIRED
  SCHEDULED
}

type DiscountRedeemCode {
  asyncUsageCount: Int!
  code: String!
  id: ID!
}

type DiscountRedeemCodeConnection {
  edges: [DiscountRedeemCodeEdge!]!
  nodes: [DiscountRedeemCode!]!
  pageInfo: PageInfo!
}

type DiscountRedeemCodeEdge {
  cursor: String!
  node: DiscountRedeemCode!
}

type DiscountAmount {
  amount: MoneyV2!
  appliesOnEachItem: Boolean!
}

type DiscountPercentage {
  percentage: Float!
}

union DiscountCustomerGetsValue = DiscountAmount | DiscountPercentage

type AllDiscountItems {
  allItems: Boolean!
}

union DiscountItems = AllDiscountItems

type DiscountCustomerGets {
  appliesOnOneTimePurchase: Boolean!
  appliesOnSubscription: Boolean!
  items: DiscountItems!
  value: DiscountCustomerGetsValue!
}

type DiscountBuyerSelectionAll {
  all: DiscountBuyerSelection!
}

type DiscountCustomers {
  customers: [Customer!]!
}

union DiscountContext = DiscountBuyerSelectionAll | DiscountCustomers

type DiscountCombinesWith {
  orderDiscounts: Boolean!
  productDiscounts: Boolean!
  shippingDiscounts: Boolean!
}

type DiscountMinimumQuantity {
  greaterThanOrEqualToQuantity: UnsignedInt64!
}

type DiscountMinimumSubtotal {
  greaterThanOrEqualToSubtotal: MoneyV2!
}

union DiscountMinimumRequirement = DiscountMinimumQuantity | DiscountMinimumSubtotal

type DiscountCodeBasic {
  appliesOncePerCustomer: Boolean!
  asyncUsageCount: Int!
  codes(
    first: Int
    after: String
    last: Int
    before: String
    reverse: Boolean = false
  ): DiscountRedeemCodeConnection!
  combinesWith: DiscountCombinesWith!
  context: DiscountContext!
  createdAt: DateTime!
  customerGets: DiscountCustomerGets!
  endsAt: DateTime
  minimumRequirement: DiscountMinimumRequirement
  shortSummary: String!
  startsAt: DateTime!
  status: DiscountStatus!
  summary: String!
  tags: [String!]!
  title: String!
  updatedAt: DateTime!
  usageLimit: Int
}

union DiscountCode =
  | DiscountCodeApp
  | DiscountCodeBasic
  | DiscountCodeBxgy
  | DiscountCodeFreeShipping

type DiscountCodeBxgy {
  appliesOncePerCustomer: Boolean!
  asyncUsageCount: Int!
  codes(
    first: Int
    after: String
    last: Int
    before: String
    reverse: Boolean = false
  ): DiscountRedeemCodeConnection!
  context: DiscountContext!
  createdAt: DateTime!
  endsAt: DateTime
  startsAt: DateTime!
  status: DiscountStatus!
  title: String!
  updatedAt: DateTime!
  usageLimit: Int
}

type DiscountCodeFreeShipping {
  appliesOncePerCustomer: Boolean!
  asyncUsageCount: Int!
  codes(
    first: Int
    after: String
    last: Int
    before: String
    reverse: Boolean = false
  ): DiscountRedeemCodeConnection!
  context: DiscountContext!
  createdAt: DateTime!
  endsAt: DateTime
  startsAt: DateTime!
  status: DiscountStatus!
  title: String!
  updatedAt: DateTime!
  usageLimit: Int
}

type DiscountCodeApp {
  appliesOncePerCustomer: Boolean!
  asyncUsageCount: Int!
  codes(
    first: Int
    after: String
    last: Int
    before: String
    reverse: Boolean = false
  ): DiscountRedeemCodeConnection!
  context: DiscountContext!
  createdAt: DateTime!
  endsAt: DateTime
  startsAt: DateTime!
  status: DiscountStatus!
  title: String!
  updatedAt: DateTime!
  usageLimit: Int
}

union Discount =
  | DiscountCodeApp
  | DiscountCodeBasic
  | DiscountCodeBxgy
  | DiscountCodeFreeShipping

type DiscountNode {
  discount: Discount!
  id: ID!
}

type DiscountNodeConnection {
  edges: [DiscountNodeEdge!]!
  nodes: [DiscountNode!]!
  pageInfo: PageInfo!
}

type DiscountNodeEdge {
  cursor: String!
  node: DiscountNode!
}

enum DiscountSortKeys {
  CREATED_AT
  ID
}

type DiscountCodeNode {
  codeDiscount: DiscountCode!
  id: ID!
}

type DiscountCodeBasicCreatePayload {
  codeDiscountNode: DiscountCodeNode
  userErrors: [DiscountUserError!]!
}
"""

_DECIMAL = re.compile(r"^-?\d+(\.\d+)?$")


def _decimal_input(value: Any) -> str:
    """``Decimal``/``Money`` from variables: a decimal string, or a JSON number."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise GraphQLError(f"invalid decimal {value!r}")
    text = value if isinstance(value, str) else repr(value)
    if not _DECIMAL.match(text.strip()):
        raise GraphQLError(f"invalid decimal {value!r}")
    return text.strip()


def _decimal_literal(node: ValueNode, _variables: Any = None) -> str:
    if isinstance(node, StringValueNode | IntValueNode | FloatValueNode):
        return _decimal_input(node.value)
    raise GraphQLError("a decimal must be a string or a number")


def _datetime_input(value: Any) -> str:
    if not isinstance(value, str):
        raise GraphQLError(f"invalid DateTime {value!r}")
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise GraphQLError(f"invalid DateTime {value!r}") from None
    return value


def _datetime_literal(node: ValueNode, _variables: Any = None) -> str:
    if isinstance(node, StringValueNode):
        return _datetime_input(node.value)
    raise GraphQLError("a DateTime must be a string")


def _uint64_input(value: Any) -> int:
    text = str(value)
    if isinstance(value, bool) or not text.isdigit():
        raise GraphQLError(f"invalid UnsignedInt64 {value!r}")
    return int(text)


def _uint64_literal(node: ValueNode, _variables: Any = None) -> int:
    if isinstance(node, StringValueNode | IntValueNode):
        return _uint64_input(node.value)
    raise GraphQLError("an UnsignedInt64 must be a string or an integer")


def _configure(scalar: GraphQLScalarType, **behaviour: Any) -> None:
    for name, fn in behaviour.items():
        setattr(scalar, name, fn)


@functools.cache
def build() -> GraphQLSchema:
    """The sandbox's schema with Shopify's scalar behaviours (built once)."""
    schema = build_schema(SDL)
    types = schema.type_map
    for name in ("Decimal", "Money"):
        scalar = types[name]
        assert isinstance(scalar, GraphQLScalarType)
        _configure(scalar, parse_value=_decimal_input, parse_literal=_decimal_literal)
    datetime_type = types["DateTime"]
    assert isinstance(datetime_type, GraphQLScalarType)
    _configure(datetime_type, parse_value=_datetime_input, parse_literal=_datetime_literal)
    uint64 = types["UnsignedInt64"]
    assert isinstance(uint64, GraphQLScalarType)
    _configure(uint64, serialize=str, parse_value=_uint64_input, parse_literal=_uint64_literal)
    return schema
