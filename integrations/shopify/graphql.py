"""The Admin GraphQL API of one shop: one request, its cost, and a clear answer or error.

Why not ``shopifyapp``'s ``admin_graphql_request``: it folds every network failure into
one ``network_error``, so a refused connection (nothing sent: send again) cannot be told
from a read timeout (a refund may have run: look before sending again); it retries 502,
503 and 504 by itself, so an unclear first attempt of a mutation disappears behind a
later answer; it sleeps with ``time.sleep`` between tries, which tests cannot control;
and it reads neither ``THROTTLED`` nor the cost bucket. So requests go straight through
the injected :class:`httpx.Client` (the same one token exchange uses, so the sandbox
routing applies), and only Shopify's explicit "I ran nothing" answers are retried.

The sequence of :meth:`AdminClient.execute`:

1. If this operation's cost is known from an earlier answer and the shop's leaky bucket
   (``extensions.cost.throttleStatus`` of the last answer, refilled at ``restoreRate``
   since) holds less, wait for the refill; a wait beyond ``max_throttle_wait`` raises
   :class:`ShopifyThrottled` at once so the caller can come back later.
2. POST the document with the access token.
3. Read the answer: 2xx JSON with ``data`` is the result; a ``THROTTLED`` error or a 429
   (Shopify ran nothing) waits for the restore and sends again, at most
   ``max_throttle_retries`` times; anything unclear (timeout, dropped connection, 5xx, an
   internal or idempotency error, data mixed with errors) raises
   :class:`ShopifyOutcomeUnknown` and is never retried here. Mutations carry
   ``@idempotent(key:)`` where Shopify supports it, so the caller's own retry after a
   look-up is safe; the decision is the caller's, with the evidence.

Bucket state and learned costs live on the client instance (one per shop and token),
guarded by a lock, never in module globals.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

import httpx

from integrations.shopify.errors import (
    GraphQLErrorDetail,
    ShopifyForbidden,
    ShopifyGraphQLError,
    ShopifyNotSent,
    ShopifyOutcomeUnknown,
    ShopifyRefused,
    ShopifyThrottled,
    ShopifyUnauthorized,
    ShopifyUserErrors,
    UserError,
)
from integrations.shopify.transport import is_shop_domain

_log = logging.getLogger(__name__)

API_VERSION = "2026-04"
# Without a throttle status to compute from, wait this long after a THROTTLED answer.
_DEFAULT_THROTTLE_WAIT = 1.0
# Codes meaning Shopify may have run the operation (or another with the same key is).
_UNCLEAR_CODES = ("INTERNAL_SERVER_ERROR",)


@dataclass(frozen=True)
class QueryCost:
    """``extensions.cost``: what the query was priced at and the bucket after it."""

    requested: float
    actual: float | None
    maximum_available: float | None
    currently_available: float | None
    restore_rate: float | None


@dataclass(frozen=True)
class GraphQLAnswer:
    data: Mapping[str, Any]
    cost: QueryCost | None


@dataclass
class _Bucket:
    maximum: float
    available: float
    restore_rate: float
    seen_at: float

    def available_at(self, now: float) -> float:
        refilled = self.available + self.restore_rate * max(0.0, now - self.seen_at)
        return min(self.maximum, refilled)


class _ShopifyRanNothing(Exception):
    """Internal: a THROTTLED answer or a 429; send again after ``wait`` seconds."""

    def __init__(self, wait: float) -> None:
        super().__init__(f"throttled, wait {wait:.2f}s")
        self.wait = wait


class AdminClient:
    """Admin GraphQL for one shop (``{name}.myshopify.com``) with one access token."""

    def __init__(
        self,
        shop: str,
        access_token: str,
        http_client: httpx.Client,
        *,
        api_version: str = API_VERSION,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        max_throttle_retries: int = 3,
        max_throttle_wait: float = 20.0,
    ) -> None:
        if not is_shop_domain(shop):
            raise ValueError(f"not a shop domain: {shop!r} (expected name.myshopify.com)")
        self.shop = shop
        self._access_token = access_token
        self._http = http_client
        self._endpoint = f"https://{shop}/admin/api/{api_version}/graphql.json"
        self._clock = clock
        self._sleep = sleep
        self._max_throttle_retries = max_throttle_retries
        self._max_throttle_wait = max_throttle_wait
        self._lock = threading.Lock()
        self._bucket: _Bucket | None = None
        self._costs: dict[str, float] = {}

    def __repr__(self) -> str:
        return f"AdminClient(shop={self.shop!r})"

    def execute(
        self,
        document: str,
        variables: Mapping[str, Any] | None = None,
        *,
        operation_name: str | None = None,
    ) -> GraphQLAnswer:
        """Run one query or mutation; see the module docstring for what may be raised."""
        body: dict[str, Any] = {"query": document, "variables": dict(variables or {})}
        if operation_name is not None:
            body["operationName"] = operation_name
        content = json.dumps(body).encode("utf-8")
        cost_key = operation_name or document
        throttled = 0
        while True:
            self._wait_for_bucket(cost_key)
            response = self._send(content)
            try:
                return self._read(response, cost_key)
            except _ShopifyRanNothing as signal:
                throttled += 1
                if throttled > self._max_throttle_retries or signal.wait > self._max_throttle_wait:
                    raise ShopifyThrottled(
                        f"{self.shop}: throttled {throttled} times",
                        retry_after=signal.wait,
                    ) from None
                _log.info("Shopify throttled %s; waiting %.2fs", self.shop, signal.wait)
                self._sleep(signal.wait)

    # ------------------------------------------------------------ steps

    def _wait_for_bucket(self, cost_key: str) -> None:
        with self._lock:
            expected = self._costs.get(cost_key)
            bucket = self._bucket
            if expected is None or bucket is None or bucket.restore_rate <= 0:
                return
            shortfall = expected - bucket.available_at(self._clock())
        if shortfall <= 0:
            return
        wait = shortfall / bucket.restore_rate
        if wait > self._max_throttle_wait:
            raise ShopifyThrottled(
                f"{self.shop}: the cost bucket needs {wait:.1f}s to refill",
                retry_after=wait,
                asked=False,
            )
        self._sleep(wait)

    def _send(self, content: bytes) -> httpx.Response:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "X-Shopify-Access-Token": self._access_token,
        }
        try:
            return self._http.post(self._endpoint, content=content, headers=headers)
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
            # No connection was made, so no byte of the request reached Shopify.
            raise ShopifyNotSent(f"{self.shop}: not sent ({type(exc).__name__})") from exc
        except httpx.TransportError as exc:
            raise ShopifyOutcomeUnknown(
                f"{self.shop}: sent, no answer ({type(exc).__name__})"
            ) from exc

    def _read(self, response: httpx.Response, cost_key: str) -> GraphQLAnswer:
        status = response.status_code
        if status == 429:
            raise _ShopifyRanNothing(_retry_after(response))
        if status == 401:
            raise ShopifyUnauthorized(
                f"{self.shop}: access token refused (revoked, expired or uninstalled)", status=401
            )
        if status == 403:
            raise ShopifyForbidden(f"{self.shop}: access scope missing", status=403)
        if status in (400, 422):
            raise ShopifyGraphQLError(_error_details(_json_or_none(response)) or _http(status))
        if 400 <= status < 500:
            raise ShopifyRefused(f"{self.shop}: HTTP {status}", status=status)
        if status != 200:
            raise ShopifyOutcomeUnknown(f"{self.shop}: HTTP {status}")
        payload = _json_or_none(response)
        if not isinstance(payload, dict):
            raise ShopifyOutcomeUnknown(f"{self.shop}: unreadable answer")
        cost = _cost(payload.get("extensions"))
        self._remember(cost_key, cost)
        errors = _error_details(payload)
        data = payload.get("data")
        if errors:
            self._raise_for(errors, data, cost)
        if not isinstance(data, dict):
            raise ShopifyOutcomeUnknown(f"{self.shop}: answer without data")
        return GraphQLAnswer(data=data, cost=cost)

    def _raise_for(
        self, errors: list[GraphQLErrorDetail], data: object, cost: QueryCost | None
    ) -> NoReturn:
        codes = [error.code or "" for error in errors]
        messages = "; ".join(error.message for error in errors)
        # Older answers say only "Throttled", without a code.
        if "THROTTLED" in codes or any(error.message == "Throttled" for error in errors):
            raise _ShopifyRanNothing(_restore_wait(cost))
        if "ACCESS_DENIED" in codes:
            raise ShopifyForbidden(f"{self.shop}: {messages}", status=200)
        if any(code in _UNCLEAR_CODES or "IDEMPOTEN" in code for code in codes):
            # An internal error may come after the work was done; an idempotency error
            # means another request with this key ran or is running.
            raise ShopifyOutcomeUnknown(f"{self.shop}: {messages}")
        if isinstance(data, dict) and any(value is not None for value in data.values()):
            raise ShopifyOutcomeUnknown(f"{self.shop}: partial answer: {messages}")
        raise ShopifyGraphQLError(errors)

    def _remember(self, cost_key: str, cost: QueryCost | None) -> None:
        if cost is None:
            return
        with self._lock:
            self._costs[cost_key] = cost.requested
            if (
                cost.maximum_available is not None
                and cost.currently_available is not None
                and cost.restore_rate is not None
            ):
                self._bucket = _Bucket(
                    maximum=cost.maximum_available,
                    available=cost.currently_available,
                    restore_rate=cost.restore_rate,
                    seen_at=self._clock(),
                )


def data_or_user_errors(answer: GraphQLAnswer, mutation: str) -> Mapping[str, Any]:
    """The mutation's payload, or :class:`ShopifyUserErrors` if it refused the input.

    A missing payload without errors is not a refusal anyone can rely on, so it is an
    unknown outcome.
    """
    payload = answer.data.get(mutation)
    if not isinstance(payload, dict):
        raise ShopifyOutcomeUnknown(f"{mutation}: answer without a payload")
    raw_errors = payload.get("userErrors") or []
    errors = [_user_error(entry) for entry in raw_errors if isinstance(entry, dict)]
    if errors:
        raise ShopifyUserErrors(mutation, errors)
    return payload


# ---------------------------------------------------------------- reading answers


def _json_or_none(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def _http(status: int) -> list[GraphQLErrorDetail]:
    return [GraphQLErrorDetail(f"HTTP {status}")]


def _error_details(payload: object) -> list[GraphQLErrorDetail]:
    """Top-level ``errors``: a list of objects, or (on some HTTP errors) one string."""
    if not isinstance(payload, dict):
        return []
    errors = payload.get("errors")
    if isinstance(errors, str):
        return [GraphQLErrorDetail(errors)]
    if not isinstance(errors, list):
        return []
    details = []
    for entry in errors:
        if not isinstance(entry, dict):
            continue
        extensions = entry.get("extensions")
        code = extensions.get("code") if isinstance(extensions, dict) else None
        details.append(
            GraphQLErrorDetail(
                message=str(entry.get("message", "")),
                code=code if isinstance(code, str) else None,
            )
        )
    return details


def _cost(extensions: object) -> QueryCost | None:
    if not isinstance(extensions, dict) or not isinstance(extensions.get("cost"), dict):
        return None
    cost = extensions["cost"]
    requested = _number(cost.get("requestedQueryCost"))
    if requested is None:
        return None
    status = cost.get("throttleStatus")
    status = status if isinstance(status, dict) else {}
    return QueryCost(
        requested=requested,
        actual=_number(cost.get("actualQueryCost")),
        maximum_available=_number(status.get("maximumAvailable")),
        currently_available=_number(status.get("currentlyAvailable")),
        restore_rate=_number(status.get("restoreRate")),
    )


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _restore_wait(cost: QueryCost | None) -> float:
    """Seconds until the bucket holds the requested cost again (at least one point)."""
    if (
        cost is None
        or cost.currently_available is None
        or cost.restore_rate is None
        or cost.restore_rate <= 0
    ):
        return _DEFAULT_THROTTLE_WAIT
    return max(cost.requested - cost.currently_available, 1.0) / cost.restore_rate


def _retry_after(response: httpx.Response) -> float:
    try:
        return max(float(response.headers.get("Retry-After", "")), 0.0)
    except ValueError:
        return _DEFAULT_THROTTLE_WAIT


def _user_error(entry: Mapping[str, Any]) -> UserError:
    field = entry.get("field")
    code = entry.get("code")
    return UserError(
        field=tuple(str(part) for part in field) if isinstance(field, list) else None,
        message=str(entry.get("message", "")),
        code=code if isinstance(code, str) else None,
    )


__all__ = [
    "API_VERSION",
    "AdminClient",
    "GraphQLAnswer",
    "QueryCost",
    "data_or_user_errors",
]
