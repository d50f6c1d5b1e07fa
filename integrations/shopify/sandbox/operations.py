"""Every Admin GraphQL operation a shop received, as query or mutation.

The request log (:mod:`integrations.sandbox_kit.received`) says which operation each
request named; a test that must prove a client only read (the read-only audit) needs
more: whether the operation the request would run is a query or a mutation. Each
GraphQL request is recorded as it arrives, before its token, validation, cost or faults
are checked, so a refused or dropped mutation is still seen. The operation is the one
Shopify would run: the document's only one, or the one ``operationName`` names. A body
that is not a readable GraphQL request is recorded with no kind, which no test of a
read-only client should accept. Documents and variables are not kept.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import deque
from dataclasses import asdict, dataclass
from typing import Any

from graphql import FieldNode, GraphQLError, get_operation_ast, parse

# As many as the request log keeps.
CAPACITY = 50_000


@dataclass(frozen=True)
class ReceivedOperation:
    """One GraphQL request to a shop: the kind of operation it would run (``query``,
    ``mutation``, ``subscription``; ``None`` when unreadable), its name and root fields."""

    number: int
    shop: str | None
    kind: str | None
    name: str | None
    root_fields: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """Control-endpoint form."""
        return asdict(self)


def read_operation(body: bytes) -> tuple[str | None, str | None, tuple[str, ...]]:
    """The kind, name and root fields of the operation ``body`` would run; never raises."""
    try:
        request = json.loads(body.decode("utf-8"))
        operation = get_operation_ast(parse(request["query"]), request.get("operationName"))
    except (ValueError, KeyError, TypeError, GraphQLError):
        return None, None, ()
    if operation is None:
        return None, None, ()
    roots = tuple(
        selection.name.value
        for selection in operation.selection_set.selections
        if isinstance(selection, FieldNode)
    )
    name = operation.name.value if operation.name else None
    return operation.operation.value, name, roots


class OperationLog:
    """The operations received, thread-safe, at most :data:`CAPACITY` of them."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self._lock = threading.Lock()
        self._numbers = itertools.count(1)
        self._entries: deque[ReceivedOperation] = deque(maxlen=capacity)

    def record(self, shop: str | None, body: bytes) -> ReceivedOperation:
        kind, name, roots = read_operation(body)
        with self._lock:
            entry = ReceivedOperation(next(self._numbers), shop, kind, name, roots)
            self._entries.append(entry)
        return entry

    def entries(self, shop: str | None = None) -> list[ReceivedOperation]:
        """The operations received (by one shop, when given), oldest first."""
        with self._lock:
            return [e for e in self._entries if shop is None or e.shop == shop]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
