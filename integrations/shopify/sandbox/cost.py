"""Query cost and the per-shop leaky bucket, a simplified copy of Shopify's rate limit.

The cost model (Shopify's is richer; this one keeps its shape and is easy to predict):

* a scalar or enum field costs 0;
* an object field costs 1 plus its selection;
* a connection (a type named ``*Connection``) costs 2 plus ``first``/``last`` times its
  selection; a plain list with ``first`` costs 1 plus ``first`` times its selection;
* a mutation's root field costs 10, whatever it selects.

``requestedQueryCost`` prices the document with the page sizes it asks for;
``actualQueryCost`` prices the answer with the items it really holds. A query above
1,000 points is refused outright (``MAX_COST_EXCEEDED``). Each shop's bucket holds 2,000
points and refills 100 points per second of sandbox time; a request is charged its
requested cost before it runs (``THROTTLED``, nothing run, when the bucket is short),
and the difference to its actual cost is given back after.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from graphql import (
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLCompositeType,
    GraphQLField,
    GraphQLInterfaceType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLSchema,
    GraphQLUnionType,
    InlineFragmentNode,
    OperationDefinitionNode,
    OperationType,
    SelectionSetNode,
    get_named_type,
)
from graphql.execution.values import get_argument_values

MAXIMUM_AVAILABLE = 2000.0
RESTORE_RATE = 100.0
SINGLE_QUERY_MAXIMUM = 1000
MUTATION_COST = 10


@dataclass
class _Pricing:
    schema: GraphQLSchema
    fragments: Mapping[str, FragmentDefinitionNode]
    variables: Mapping[str, Any]


def _composite(named: object, fallback: GraphQLCompositeType) -> GraphQLCompositeType:
    if isinstance(named, GraphQLObjectType | GraphQLInterfaceType | GraphQLUnionType):
        return named
    return fallback


def _fields(
    pricing: _Pricing, selection_set: SelectionSetNode | None, parent: GraphQLCompositeType
) -> list[tuple[FieldNode, GraphQLCompositeType]]:
    """The fields selected on ``parent``, fragments flattened (each with the type it is
    selected on)."""
    found: list[tuple[FieldNode, GraphQLCompositeType]] = []
    for selection in selection_set.selections if selection_set else ():
        if isinstance(selection, FieldNode):
            found.append((selection, parent))
        elif isinstance(selection, InlineFragmentNode):
            on = parent
            if selection.type_condition is not None:
                named = pricing.schema.get_type(selection.type_condition.name.value)
                on = _composite(named, parent)
            found.extend(_fields(pricing, selection.selection_set, on))
        elif isinstance(selection, FragmentSpreadNode):
            fragment = pricing.fragments.get(selection.name.value)
            if fragment is not None:
                named = pricing.schema.get_type(fragment.type_condition.name.value)
                on = _composite(named, parent)
                found.extend(_fields(pricing, fragment.selection_set, on))
    return found


def _definition(parent: GraphQLCompositeType, name: str) -> GraphQLField | None:
    if isinstance(parent, GraphQLObjectType | GraphQLInterfaceType):
        found: GraphQLField | None = parent.fields.get(name)
        return found
    return None


def _price(
    pricing: _Pricing,
    selection_set: SelectionSetNode | None,
    parent: GraphQLCompositeType,
    data: Any,
    actual: bool,
) -> int:
    total = 0
    for node, on in _fields(pricing, selection_set, parent):
        definition = _definition(on, node.name.value)
        if definition is None:  # __typename
            continue
        named = get_named_type(definition.type)
        if not isinstance(named, GraphQLObjectType | GraphQLInterfaceType | GraphQLUnionType):
            continue
        key = node.alias.value if node.alias else node.name.value
        value = data.get(key) if isinstance(data, Mapping) else None
        if actual and value is None:
            continue
        args = get_argument_values(definition, node, dict(pricing.variables))
        size = args.get("first") if args.get("first") is not None else args.get("last")
        field_type = definition.type
        if isinstance(field_type, GraphQLNonNull):
            field_type = field_type.of_type
        if named.name.endswith("Connection"):
            count = len(_items(value)) if actual else int(size or 1)
            child = _price(pricing, node.selection_set, named, _one(value, actual), actual)
            total += 2 + count * child
        elif isinstance(field_type, GraphQLList):
            count = len(value) if isinstance(value, list) else int(size or 1)
            child = _price(pricing, node.selection_set, named, _one(value, actual), actual)
            total += 1 + count * child
        else:
            total += 1 + _price(pricing, node.selection_set, named, value, actual)
    return total


def _items(connection: Any) -> list[Any]:
    """The items an answered connection holds."""
    if not isinstance(connection, Mapping):
        return []
    return list(connection.get("edges") or connection.get("nodes") or [])


def _one(value: Any, actual: bool) -> Any:
    """One item of an answered list, or a connection cut to its first item, to price the
    other items like it."""
    if not actual or value is None:
        return None
    if isinstance(value, list):
        return value[0] if value else None
    if isinstance(value, Mapping):
        return {k: (v[:1] if isinstance(v, list) else v) for k, v in value.items()}
    return value


def query_cost(
    schema: GraphQLSchema,
    operation: OperationDefinitionNode,
    fragments: Mapping[str, FragmentDefinitionNode],
    variables: Mapping[str, Any],
    data: Mapping[str, Any] | None = None,
) -> int:
    """The operation's cost: requested (``data`` None) or actual (priced on ``data``)."""
    if operation.operation == OperationType.MUTATION:
        return MUTATION_COST * len(operation.selection_set.selections)
    root = schema.query_type
    assert root is not None
    pricing = _Pricing(schema, fragments, variables)
    return _price(pricing, operation.selection_set, root, data, actual=data is not None)


@dataclass
class ThrottleStatus:
    maximum_available: float
    currently_available: float
    restore_rate: float

    def to_json(self) -> dict[str, float]:
        return {
            "maximumAvailable": self.maximum_available,
            "currentlyAvailable": self.currently_available,
            "restoreRate": self.restore_rate,
        }


class Buckets:
    """One leaky bucket per shop, on the sandbox clock."""

    def __init__(
        self, maximum: float = MAXIMUM_AVAILABLE, restore_rate: float = RESTORE_RATE
    ) -> None:
        self.maximum = maximum
        self.restore_rate = restore_rate
        self._lock = threading.Lock()
        self._levels: dict[str, tuple[float, float]] = {}  # shop -> (available, at)
        # What each shop's queries have used (charged less given back), and how many
        # were turned away: what a benchmark compares with the refill.
        self._spent: dict[str, float] = {}
        self._refused: dict[str, int] = {}

    def _level(self, shop: str, now: float) -> float:
        available, at = self._levels.get(shop, (self.maximum, now))
        # Rounded to milli-points: sandbox times are large floats, and 0.05 s must buy
        # 5 points exactly, not 4.99999.
        refill = round(max(now - at, 0.0) * self.restore_rate, 3)
        return min(self.maximum, available + refill)

    def take(self, shop: str, cost: float, now: float) -> tuple[bool, ThrottleStatus]:
        """Charge ``cost`` if the bucket holds it; returns whether it did, and the status."""
        with self._lock:
            available = self._level(shop, now)
            charged = available >= cost
            if charged:
                available -= cost
                self._spent[shop] = self._spent.get(shop, 0.0) + cost
            else:
                self._refused[shop] = self._refused.get(shop, 0) + 1
            self._levels[shop] = (available, now)
            return charged, ThrottleStatus(self.maximum, available, self.restore_rate)

    def give_back(self, shop: str, points: float, now: float) -> ThrottleStatus:
        """Return points charged but not used."""
        with self._lock:
            available = min(self.maximum, self._level(shop, now) + max(points, 0.0))
            self._levels[shop] = (available, now)
            self._spent[shop] = self._spent.get(shop, 0.0) - max(points, 0.0)
            return ThrottleStatus(self.maximum, available, self.restore_rate)

    def usage(self, shop: str) -> dict[str, float]:
        """Points the shop's queries used, and how many queries the bucket refused."""
        with self._lock:
            return {
                "spent": round(self._spent.get(shop, 0.0), 3),
                "refused": self._refused.get(shop, 0),
                "restore_rate": self.restore_rate,
            }

    def set_available(self, shop: str, points: float, now: float) -> None:
        """Set what a shop's bucket holds now (tests stage a short bucket this way)."""
        with self._lock:
            self._levels[shop] = (min(max(points, 0.0), self.maximum), now)
