"""What a resource handler works with: one request's account, mode, time and tools.

Handlers mutate the :class:`~.store.Space` of the key that made the request, emit events
through :meth:`Ctx.emit`, and return Stripe objects. This module also holds the pieces
every list and retrieve endpoint shares: cursor pagination, ``expand[]`` and rendering of
derived fields (a charge's embedded ``refunds`` list).
"""

from __future__ import annotations

import copy
import operator
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from integrations.sandbox_kit import Clock

from .auth import Account, ApiKey, permission_denied
from .errors import StripeApiError, no_such, unknown_param, validation
from .forms import Params, apply_metadata
from .ids import new_id
from .store import Space, Store

JSON = dict[str, Any]


@dataclass
class Config:
    """Behaviour knobs of the simulated Stripe (seconds are sandbox-clock seconds)."""

    refund_failure_delay: float = 60.0
    dispute_delay: float = 2.0
    requires_action_expiry: float = 7 * 24 * 3600.0


class EventSink(Protocol):
    """Where new events go to be delivered to webhook endpoints."""

    def enqueue(self, space: Space, event: JSON) -> None:
        """Queue ``event`` for every matching endpoint of ``space``."""


class Core(Protocol):
    """The parts of the sandbox handlers may use."""

    @property
    def store(self) -> Store:
        """All state."""

    @property
    def clock(self) -> Clock:
        """Sandbox time."""

    @property
    def config(self) -> Config:
        """Behaviour settings."""

    @property
    def events(self) -> EventSink:
        """Webhook delivery."""


@dataclass
class Ctx:
    """One request (or one scheduled transition) in one account and mode."""

    core: Core
    account: Account
    space: Space
    key: ApiKey | None = None
    request_id: str | None = None
    idempotency_key: str | None = None
    emitted: list[JSON] = field(default_factory=list)

    @property
    def livemode(self) -> bool:
        """Whether this is the account's live mode."""
        return self.space.livemode

    @property
    def config(self) -> Config:
        """The sandbox's behaviour settings."""
        return self.core.config

    def now(self) -> int:
        """Sandbox time as Stripe's integer timestamps."""
        return int(self.core.clock.now())

    def now_float(self) -> float:
        """Sandbox time with sub-second precision (for scheduling)."""
        return self.core.clock.now()

    # -- lookups ---------------------------------------------------------------------------

    def require(
        self, collection: str, object_id: str, kind: str, *, param: str = "id", status: int = 404
    ) -> JSON:
        """The object or Stripe's ``No such <kind>`` (404 in the path, 400 in a param)."""
        obj = self.space.get(collection, object_id)
        if obj is None or self.space.private.get(object_id, {}).get("deleted"):
            raise no_such(kind, object_id, param=param, status=status)
        return obj

    # -- events ----------------------------------------------------------------------------

    def emit_changes(self, event_type: str, obj: JSON, before: JSON) -> None:
        """Emit ``event_type`` if anything the API shows of ``obj`` moved since ``before``
        (a rendering), with the old values as ``previous_attributes``."""
        previous = diff(before, render(self, obj))
        if previous:
            self.emit(event_type, obj, previous)

    def update_metadata(self, params: Params, obj: JSON, event_type: str) -> None:
        """An update that may change only metadata (refunds, disputes), with its event."""
        params.allow({"metadata"})
        metadata = params.metadata()
        before = render(self, obj)
        obj["metadata"] = apply_metadata(obj["metadata"], metadata)
        self.emit_changes(event_type, obj, before)

    def emit(self, event_type: str, obj: JSON, previous: JSON | None = None) -> JSON:
        """Record an event carrying a snapshot of ``obj`` and queue its webhooks."""
        event = self.event(event_type, obj, previous, created=self.now())
        self.space.put("events", event)
        self.core.events.enqueue(self.space, event)
        self.emitted.append(event)
        self.core.store.dirty = True
        return event

    def event(self, event_type: str, obj: JSON, previous: JSON | None, *, created: int) -> JSON:
        """An event object about ``obj`` as of ``created`` (not yet recorded or sent)."""
        data: JSON = {"object": render(self, obj)}
        if previous:
            data["previous_attributes"] = copy.deepcopy(previous)
        return {
            "id": new_id("evt"),
            "object": "event",
            "api_version": self.account.api_version,
            "created": created,
            "data": data,
            "livemode": self.livemode,
            "pending_webhooks": 0,
            "request": {"id": self.request_id, "idempotency_key": self.idempotency_key},
            "type": event_type,
        }


def diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> JSON:
    """``previous_attributes``: the old values of every top-level field that changed."""
    changed: JSON = {}
    for key in set(before) | set(after):
        if key.startswith("_"):
            continue
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        if isinstance(old, dict) and isinstance(new, dict) and "object" not in old:
            # Plain hashes (metadata, cancellation_details): only the keys that changed,
            # with ``null`` for keys that did not exist before.
            changed[key] = diff(old, new)
        else:
            changed[key] = copy.deepcopy(old)
    return dict(sorted(changed.items()))


# -- rendering ---------------------------------------------------------------------------

Renderer = Callable[[Ctx, JSON], None]
_RENDERERS: dict[str, Renderer] = {}


def renderer(object_type: str) -> Callable[[Renderer], Renderer]:
    """Register a function that fills derived fields of ``object_type`` on a copy."""

    def register(fn: Renderer) -> Renderer:
        _RENDERERS[object_type] = fn
        return fn

    return register


def render(ctx: Ctx, obj: JSON) -> JSON:
    """A copy of a stored object as the API shows it."""
    out = copy.deepcopy(obj)
    fn = _RENDERERS.get(str(out.get("object")))
    if fn is not None:
        fn(ctx, out)
    return out


# -- lists -------------------------------------------------------------------------------


_RANGE: dict[str, Callable[[int, int], bool]] = {
    "gt": operator.gt,
    "gte": operator.ge,
    "lt": operator.lt,
    "lte": operator.le,
    "eq": operator.eq,
}


@dataclass
class ListQuery:
    """Validated ``limit`` / ``starting_after`` / ``ending_before`` / ``created``."""

    limit: int
    starting_after: str | None
    ending_before: str | None
    created: dict[str, int] = field(default_factory=dict)

    def admits(self, obj: Mapping[str, Any]) -> bool:
        """Whether ``obj`` passes the ``created`` filter (every bound given must hold)."""
        created = int(obj["created"])
        return all(_RANGE[op](created, bound) for op, bound in self.created.items())


# Lists Stripe documents with a ``created`` filter take LIST_PARAMS; the few that have
# none (a charge's refunds, a customer's balance transactions, webhook endpoints) take
# UNDATED_LIST_PARAMS, so ``created`` there is an unknown parameter, as on Stripe.
UNDATED_LIST_PARAMS = ("limit", "starting_after", "ending_before")
LIST_PARAMS = (*UNDATED_LIST_PARAMS, "created")


def _created_range(params: Params) -> dict[str, int]:
    """``created=N`` (exactly N) or ``created[gt|gte|lt|lte]=N``, as Stripe's lists take them."""
    value = params.raw().get("created")
    if value is None or value == "":
        return {}
    if not isinstance(value, dict):
        exact = params.integer("created")
        return {} if exact is None else {"eq": exact}
    bounds = params.child("created")
    assert bounds is not None
    result: dict[str, int] = {}
    for op in bounds.raw():
        if op not in ("gt", "gte", "lt", "lte"):
            raise unknown_param(bounds.label(op))
        bound = bounds.integer(op)
        if bound is not None:
            result[op] = bound
    return result


def list_query(params: Params) -> ListQuery:
    """Read the pagination parameters, refusing what Stripe refuses."""
    text = params.string("limit")
    limit = 10
    if text not in (None, ""):
        try:
            limit = int(str(text))
        except ValueError:
            raise validation(
                f"Invalid integer: {text}", param="limit", code="parameter_invalid_integer"
            ) from None
        if not 1 <= limit <= 100:
            raise validation(
                "Invalid limit: must be between 1 and 100",
                param="limit",
                code="parameter_invalid_integer",
            )
    starting_after = params.string("starting_after") or None
    ending_before = params.string("ending_before") or None
    if starting_after and ending_before:
        raise validation(
            "You may only specify one of these parameters: ending_before, starting_after.",
            param="ending_before",
        )
    return ListQuery(limit, starting_after, ending_before, _created_range(params))


def page(
    ctx: Ctx,
    query: ListQuery,
    items: list[JSON],
    url: str,
    *,
    collection: str,
    kind: str,
) -> JSON:
    """A Stripe list object over ``items`` (filtered by the endpoint's own parameters,
    newest first); the ``created`` filter is applied here for every list."""
    seq = ctx.space.seq
    items = [o for o in items if query.admits(o)]
    if query.starting_after:
        cursor = _cursor(ctx, collection, query.starting_after, kind, "starting_after")
        older = [o for o in items if seq(str(o["id"])) < cursor]
        chosen = older[: query.limit]
        has_more = len(older) > query.limit
    elif query.ending_before:
        cursor = _cursor(ctx, collection, query.ending_before, kind, "ending_before")
        newer = [o for o in items if seq(str(o["id"])) > cursor]
        chosen = newer[-query.limit :] if query.limit < len(newer) else newer
        has_more = len(newer) > query.limit
    else:
        chosen = items[: query.limit]
        has_more = len(items) > query.limit
    return list_object([render(ctx, o) for o in chosen], has_more, url)


def _cursor(ctx: Ctx, collection: str, object_id: str, kind: str, param: str) -> int:
    if ctx.space.get(collection, object_id) is None:
        raise no_such(kind, object_id, param=param, status=400)
    return ctx.space.seq(object_id)


def list_object(data: list[JSON], has_more: bool, url: str) -> JSON:
    """``{"object": "list", ...}`` in Stripe's key order."""
    return {"object": "list", "data": data, "has_more": has_more, "url": url}


# -- expand[] ----------------------------------------------------------------------------

# object type -> expandable field (dotted for nested hashes) -> target object type
EXPANDABLE: dict[str, dict[str, str]] = {
    "payment_intent": {
        "latest_charge": "charge",
        "customer": "customer",
        "payment_method": "payment_method",
    },
    # A charge's refunds are always rendered here; expanding them (as the real API wants
    # since 2022-11-15) is accepted so clients written for Stripe work unchanged.
    "charge": {
        "customer": "customer",
        "payment_intent": "payment_intent",
        "refunds": "list:refund",
    },
    "refund": {"charge": "charge", "payment_intent": "payment_intent"},
    "dispute": {"charge": "charge", "payment_intent": "payment_intent"},
    "customer_balance_transaction": {"customer": "customer"},
    "promotion_code": {"customer": "customer", "promotion.coupon": "coupon"},
    "subscription": {"customer": "customer", "default_payment_method": "payment_method"},
    "price": {"product": "product"},
}

# object type -> (collection, resource group for permissions, name in errors)
TYPES: dict[str, tuple[str, str, str]] = {
    "charge": ("charges", "charges", "charge"),
    "customer": ("customers", "customers", "customer"),
    "payment_intent": ("payment_intents", "payment_intents", "payment_intent"),
    "payment_method": ("payment_methods", "payment_methods", "PaymentMethod"),
    "refund": ("refunds", "refunds", "refund"),
    "dispute": ("disputes", "disputes", "dispute"),
    "coupon": ("coupons", "coupons", "coupon"),
    "promotion_code": ("promotion_codes", "promotion_codes", "promotion code"),
    "product": ("products", "products", "product"),
    "price": ("prices", "prices", "price"),
    "subscription": ("subscriptions", "subscriptions", "subscription"),
    "customer_balance_transaction": (
        "customer_balance_transactions",
        "customers",
        "customer balance transaction",
    ),
    "event": ("events", "events", "event"),
    "webhook_endpoint": ("webhook_endpoints", "webhook_endpoints", "webhook endpoint"),
}

MAX_EXPAND_DEPTH = 4


def expand_paths(params: Params) -> list[str]:
    """The ``expand[]`` values of a request."""
    values = params.array("expand") or []
    paths = []
    for value in values:
        if not isinstance(value, str):
            raise validation("Invalid array: expand", param="expand")
        if value:
            paths.append(value)
    return paths


def check_expand(object_type: str, paths: Iterable[str], key: ApiKey | None) -> None:
    """Refuse unknown expansions and expansions the key may not read, before executing."""
    for path in paths:
        parts = path.split(".")
        if len(parts) > MAX_EXPAND_DEPTH + (1 if object_type.startswith("list:") else 0):
            raise validation(
                f"You cannot expand more than {MAX_EXPAND_DEPTH} levels of a property. "
                f"Property: {path}",
                param="expand",
            )
        current = object_type
        index = 0
        while index < len(parts):
            if current.startswith("list:"):
                if parts[index] != "data":
                    raise _not_expandable(path)
                current = current[5:]
                index += 1
                continue
            fields = EXPANDABLE.get(current, {})
            match = None
            for width in (2, 1):
                name = ".".join(parts[index : index + width])
                if width <= len(parts) - index and name in fields:
                    match = name
                    break
            if match is None:
                raise _not_expandable(path)
            current = fields[match]
            index += len(match.split("."))
            if key is not None:
                resource = TYPES[current.removeprefix("list:")][1]
                if not key.allows(resource, "read"):
                    raise permission_denied(key, resource, "read")


def _not_expandable(path: str) -> StripeApiError:
    return validation(f"This property cannot be expanded ({path}).", param="expand")


def apply_expand(ctx: Ctx, body: JSON, paths: Iterable[str]) -> JSON:
    """Replace ids named by ``paths`` with the objects they refer to."""
    for path in paths:
        _expand(ctx, body, path.split("."))
    return body


def _expand(ctx: Ctx, node: Any, parts: list[str]) -> None:
    if not parts or not isinstance(node, dict):
        return
    if node.get("object") == "list" and parts[0] == "data":
        for item in node.get("data", []):
            _expand(ctx, item, parts[1:])
        return
    fields = EXPANDABLE.get(str(node.get("object")), {})
    for width in (2, 1):
        name = ".".join(parts[:width])
        if width <= len(parts) and name in fields:
            holder: Any = node
            *outer, leaf = name.split(".")
            for step in outer:
                holder = holder.get(step) if isinstance(holder, dict) else None
            if not isinstance(holder, dict):
                return
            value = holder.get(leaf)
            if isinstance(value, str):
                holder[leaf] = _resolve(ctx, fields[name], value)
            _expand(ctx, holder.get(leaf), parts[width:])
            return


def _resolve(ctx: Ctx, object_type: str, object_id: str) -> Any:
    collection = TYPES[object_type][0]
    obj = ctx.space.get(collection, object_id)
    if obj is None:
        return object_id
    if ctx.space.private.get(object_id, {}).get("deleted"):
        return {"id": object_id, "object": object_type, "deleted": True}
    return render(ctx, obj)
