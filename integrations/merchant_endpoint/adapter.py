"""The merchant endpoint adapter: approved actions carried out by the merchant's own HTTPS
endpoint, on the protocol of :mod:`.protocol`, every request signed (:mod:`.signing`).

The executor's sequence with it, as with Stripe:

1. ``facts(kind, target)``: ``POST /facts``; a refund's target is one of the merchant's
   payments (its capture, refunds with their metadata, dispute, customer), a credit's
   target one of its customers (with the credits given). 404: the target does not exist.
2. The checks run on those facts; then ``submit(request)``: ``POST /actions`` with the
   action's one idempotency key in the ``Idempotency-Key`` header and in the body, our
   action id in the metadata. The merchant answers the action's id and status.
3. An unclear outcome (a timeout, a dropped connection, a 5xx, a 409 saying the key is
   still being worked on) raises :class:`~integrations.provider.OutcomeUnknown`; the
   executor later calls ``find(request)``: ``POST /actions/status`` with the key. 404
   means nothing happened under that key, and only then does the executor send again,
   with the same key and the same bytes.

Besides the contract, ``customers_with_email(email)`` (``POST /customers/find``) is how
a proposal learns which of the merchant's customers the case's verified customer is.

Errors map as Stripe's do: a refused connection is :class:`NotSent` (no byte left); 429 is
:class:`Throttled` with ``Retry-After``; 409 for the key with another body is
:class:`IdempotencyConflict`; 401 (the signature refused) is :class:`CredentialsRefused`;
403 :class:`PermissionDenied`; any other 4xx :class:`ProviderRejected`. Redirects are never
followed. A new connection that reaches an address the endpoint may not have (see
:mod:`.addresses`) is closed before anything is sent on it: :class:`ProviderRejected` with
the code ``endpoint_not_public``; a request its secrets cannot sign is
:class:`InvalidRequest`, not sent. Neither secrets nor signatures are logged or shown by
``repr``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, NoReturn
from urllib.parse import urlsplit

import httpx

from integrations.provider import (
    ActionKind,
    ActionRequest,
    CredentialsRefused,
    CustomerFacts,
    IdempotencyConflict,
    InvalidRequest,
    NotSent,
    OutcomeUnknown,
    PaymentFacts,
    PermissionDenied,
    ProviderAnswer,
    ProviderCredit,
    ProviderCustomer,
    ProviderError,
    ProviderRefund,
    ProviderRejected,
    ProviderStatus,
    TargetFacts,
    Targets,
    Throttled,
)

from .addresses import PrivatePeer, peer_guard
from .protocol import (
    ACTIONS_PATH,
    CUSTOMERS_PATH,
    FACTS_PATH,
    IDEMPOTENCY_HEADER,
    KEY_IN_USE,
    KINDS,
    MERCHANT_ID,
    REPLAYED_HEADER,
    STATUS_PATH,
    STATUSES,
    action_body,
    customers_body,
    encode,
    facts_body,
    status_body,
)
from .signing import SigningSecrets, sign

__all__ = [
    "NAME",
    "TARGETS",
    "MerchantEndpointAdapter",
    "merchant_http_client",
]

NAME = "merchant"

TARGETS = Targets(
    ids={kind: MERCHANT_ID for kind in KINDS},
    examples={
        ActionKind.REFUND: "a payment id of the merchant's own endpoint",
        ActionKind.CUSTOMER_CREDIT: "a customer id of the merchant's own endpoint",
    },
    line_item_id=MERCHANT_ID,
    # The merchant's ids can look like anyone's, so a proposal must say it is for them.
    named_only=True,
)

# 9999-12-31T23:59:59Z: a later time is no time a payment was made.
_LAST_SECOND = 253_402_300_799
# What may follow the reason of a failed action, or an error's message, into our records.
_TEXT_MAX = 500


def _utc_now() -> datetime:
    return datetime.now(UTC)


def merchant_http_client(timeout_seconds: float) -> httpx.Client:
    """The client adapters share (the caller closes it): ``timeout_seconds`` to connect,
    and between bytes of the answer; redirects are never followed, so an answer is always
    the one the endpoint gave for the URL Caseward signed its request for."""
    return httpx.Client(timeout=timeout_seconds, follow_redirects=False)


class MerchantEndpointAdapter:
    """Facts, one write per action, and look-ups, against one merchant's endpoint.

    ``endpoint_url`` is the base the protocol's paths hang from; ``secrets`` sign every request
    (both of them during a rotation's grace period); ``http_client`` is shared by the
    adapters of a process (its timeout is the provider timeout); ``now`` is the signing
    time, injectable so tests can sign in the past.
    """

    name = NAME
    targets = TARGETS

    def __init__(
        self,
        endpoint_url: str,
        secrets: SigningSecrets,
        *,
        http_client: httpx.Client,
        now: Callable[[], datetime] = _utc_now,
    ) -> None:
        self._base = endpoint_url.rstrip("/")
        self._host = urlsplit(self._base).hostname or ""
        self._secrets = secrets
        self._http = http_client
        self._now = now

    def __repr__(self) -> str:
        return f"MerchantEndpointAdapter({self._base!r})"

    def facts(self, kind: ActionKind, target: str) -> TargetFacts:
        """The payment a refund targets, or the customer a credit targets, as the merchant
        reports it now; ``exists=False`` when it answers 404."""
        kind = ActionKind(kind)
        _check_kind(kind)
        what = f"the {kind.value} target {target}"
        response = self._read(FACTS_PATH, facts_body(kind, target), what)
        if kind is ActionKind.REFUND:
            if response.status_code == 404:
                return PaymentFacts(id=target, exists=False)
            return _payment(_document(response, what), target)
        if response.status_code == 404:
            return CustomerFacts(id=target, exists=False)
        return _customer(_document(response, what), target)

    def submit(self, request: ActionRequest) -> ProviderAnswer:
        """Send the action once under its idempotency key; see the module docstring for
        what is raised when the outcome is not a clear answer."""
        request = replace(request, kind=ActionKind(request.kind))
        _check_kind(request.kind)
        what = f"action {request.action_id}"
        body = encode(action_body(request))
        try:
            response = self._send(ACTIONS_PATH, body, {IDEMPOTENCY_HEADER: request.idempotency_key})
        except _NoAnswer as exc:
            raise OutcomeUnknown(f"{what}: sent to {self._base}, no answer ({exc})") from exc
        if response.is_success:
            try:
                return _answer(response)
            except ValueError as exc:
                # It answered success, so something may have happened: look it up.
                raise OutcomeUnknown(f"{what}: unreadable answer ({exc})") from exc
        _raise_for(response, what, write=True)

    def find(self, request: ActionRequest) -> ProviderAnswer | None:
        """The action's effect as the merchant reports it now, found by its idempotency key;
        ``None`` when the merchant answers 404 (nothing happened under that key). Never
        writes, so it also serves to refresh a pending status."""
        what = f"the status of action {request.action_id}"
        response = self._read(STATUS_PATH, status_body(request.idempotency_key), what)
        if response.status_code == 404:
            return None
        try:
            return _answer(response)
        except ValueError as exc:
            raise ProviderError(f"{what}: unreadable answer ({exc})") from exc

    def customers_with_email(self, email: str) -> tuple[ProviderCustomer, ...]:
        """The merchant's customers it says have ``email``, as it answers them (the caller
        decides which answers match). A 404 is an endpoint that does not answer the
        look-up at all, so it is an error, not "none"."""
        what = "the customer look-up by email"
        response = self._read(CUSTOMERS_PATH, customers_body(email), what)
        if response.status_code == 404:
            raise ProviderRejected(
                f"{what}: {self._base}{CUSTOMERS_PATH} answered 404", code="not_found"
            )
        try:
            listed = _list(response.json(), "the answer")
            return tuple(_listed_customer(item) for item in listed)
        except ValueError as exc:
            raise ProviderError(f"{what}: unreadable answer ({exc})") from exc

    # ------------------------------------------------------------ requests

    def _read(self, path: str, document: dict[str, Any], what: str) -> httpx.Response:
        """A signed read; a 404 is returned for the caller to interpret."""
        try:
            response = self._send(path, encode(document), {})
        except _NoAnswer as exc:
            raise ProviderError(f"{what}: {self._base} did not answer ({exc})") from exc
        if response.is_success or response.status_code == 404:
            return response
        _raise_for(response, what, write=False)

    def _send(self, path: str, body: str, headers: Mapping[str, str]) -> httpx.Response:
        now = self._now()
        try:
            signed = sign(self._secrets.in_use(now), body, now=now)
        except ValueError as exc:
            # A stored secret that cannot sign: it would not sign a resend either.
            raise InvalidRequest(f"{self._base}{path}: not sent, not signed ({exc})") from exc
        try:
            return self._http.post(
                f"{self._base}{path}",
                content=body.encode("ascii"),
                headers={
                    "Content-Type": "application/json",
                    "Accept": "application/json",
                    "User-Agent": "Caseward",
                    **signed,
                    **headers,
                },
                extensions={"trace": peer_guard(self._host)},
            )
        except PrivatePeer as exc:
            # Refused rather than NotSent (which is sent again at once): a resend would
            # reach the same address.
            raise ProviderRejected(
                f"{self._base}{path}: not sent, the endpoint's host reached {exc.address}, "
                "which is not a public address",
                code="endpoint_not_public",
            ) from exc
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
            # No connection was made, so no byte of the request reached the merchant.
            raise NotSent(f"{self._base}{path}: not sent ({type(exc).__name__})") from exc
        except httpx.TransportError as exc:
            raise _NoAnswer(type(exc).__name__) from exc


class _NoAnswer(Exception):
    """The request went out and no answer came back (timeout, dropped connection)."""


def _check_kind(kind: ActionKind) -> None:
    if kind not in KINDS:
        raise ProviderRejected(
            f"the merchant endpoint protocol does not do {kind.value}", code="unsupported"
        )


def _raise_for(response: httpx.Response, what: str, *, write: bool) -> NoReturn:
    """The contract's error for an answer that is not a success."""
    status = response.status_code
    code, message = _error_of(response)
    said = f"{what}: the merchant's endpoint answered {status}" + (
        f" {code}: {message}" if code or message else ""
    )
    if status == 429:
        raise Throttled(said, retry_after=_retry_after(response))
    if status == 409 and write:
        if code == KEY_IN_USE:
            raise OutcomeUnknown(said)  # an earlier send with the key is still running
        raise IdempotencyConflict(said)
    if status == 401:
        raise CredentialsRefused(said, reason="signature_refused")
    if status == 403:
        raise PermissionDenied(said, code=code, http_status=status)
    if 400 <= status < 500:
        raise ProviderRejected(said, code=code, http_status=status)
    if write:
        raise OutcomeUnknown(said)  # a 5xx, or a redirect we do not follow
    raise ProviderError(said)


def _error_of(response: httpx.Response) -> tuple[str | None, str]:
    try:
        error = response.json().get("error")
    except (ValueError, AttributeError):
        return None, ""
    if not isinstance(error, dict):
        return None, ""
    code, message = error.get("code"), error.get("message")
    return (
        code[:100] if isinstance(code, str) else None,
        message[:_TEXT_MAX] if isinstance(message, str) else "",
    )


def _retry_after(response: httpx.Response) -> float | None:
    try:
        return max(float(response.headers.get("Retry-After", "")), 0.0)
    except ValueError:
        return None


# ------------------------------------------------------------ answers


def _answer(response: httpx.Response) -> ProviderAnswer:
    """``{"id", "status", "failure_reason"}``; ValueError when it is not that."""
    document = response.json()
    if not isinstance(document, dict):
        raise ValueError("not a JSON object")
    status = document.get("status")
    if status not in STATUSES:
        raise ValueError(f"status is not one of {', '.join(STATUSES)}")
    return ProviderAnswer(
        reference=_id(document.get("id"), "id"),
        status=ProviderStatus(status),
        raw=document,
        replayed=response.headers.get(REPLAYED_HEADER, "").lower() == "true",
        failure_reason=_optional_text(document.get("failure_reason"), "failure_reason"),
    )


def _document(response: httpx.Response, what: str) -> dict[str, Any]:
    try:
        document = response.json()
    except ValueError as exc:
        raise ProviderError(f"{what}: the answer is not JSON") from exc
    if not isinstance(document, dict):
        raise ProviderError(f"{what}: the answer is not a JSON object")
    return document


def _payment(document: dict[str, Any], target: str) -> PaymentFacts:
    try:
        captured = _amount(document.get("captured"), "captured")
        return PaymentFacts(
            id=target,
            exists=True,
            currency=_currency(document.get("currency"), "currency"),
            amount=_amount(document.get("amount"), "amount"),
            captured=captured,
            paid=captured > 0,
            disputed=_flag(document.get("disputed", False), "disputed"),
            customer_id=(
                None if document.get("customer") is None else _id(document["customer"], "customer")
            ),
            created=_time(document.get("created"), "created"),
            refunds=tuple(_refund(r) for r in _list(document.get("refunds", []), "refunds")),
        )
    except ValueError as exc:
        raise ProviderError(f"payment {target}: {exc}") from exc


def _refund(item: object) -> ProviderRefund:
    entry = _object(item, "refunds[]")
    status = entry.get("status")
    if status not in STATUSES:
        raise ValueError(f"a refund's status is not one of {', '.join(STATUSES)}")
    return ProviderRefund(
        id=_id(entry.get("id"), "refunds[].id"),
        amount=_amount(entry.get("amount"), "refunds[].amount"),
        currency=_currency(entry.get("currency"), "refunds[].currency"),
        status=ProviderStatus(status),
        created=_time(entry.get("created"), "refunds[].created"),
        metadata=_metadata(entry.get("metadata", {})),
        failure_reason=_optional_text(entry.get("failure_reason"), "refunds[].failure_reason"),
    )


def _customer(document: dict[str, Any], target: str) -> CustomerFacts:
    try:
        currency = document.get("currency")
        return CustomerFacts(
            id=target,
            exists=True,
            deleted=_flag(document.get("deleted", False), "deleted"),
            email=_optional_text(document.get("email"), "email"),
            balance_currency=None if currency is None else _currency(currency, "currency"),
            credits=tuple(_credit(c) for c in _list(document.get("credits", []), "credits")),
        )
    except ValueError as exc:
        raise ProviderError(f"customer {target}: {exc}") from exc


def _listed_customer(item: object) -> ProviderCustomer:
    entry = _object(item, "customers[]")
    email = entry.get("email")
    if not isinstance(email, str):
        raise ValueError("customers[].email is not text")
    return ProviderCustomer(id=_id(entry.get("id"), "customers[].id"), email=email)


def _credit(item: object) -> ProviderCredit:
    entry = _object(item, "credits[]")
    return ProviderCredit(
        id=_id(entry.get("id"), "credits[].id"),
        # The protocol says what the customer got; the contract counts it as Stripe's
        # balance does, negative for money owed to the customer.
        amount=-_amount(entry.get("amount"), "credits[].amount"),
        currency=_currency(entry.get("currency"), "credits[].currency"),
        created=_time(entry.get("created"), "credits[].created"),
        metadata=_metadata(entry.get("metadata", {})),
    )


def _object(value: object, name: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"{name} is not an object")
    return value


def _list(value: object, name: str) -> list[object]:
    if not isinstance(value, list):
        raise ValueError(f"{name} is not a list")
    return value


def _id(value: object, name: str) -> str:
    if not isinstance(value, str) or not MERCHANT_ID.fullmatch(value):
        raise ValueError(f"{name} is not an id ({MERCHANT_ID.pattern})")
    return value


def _amount(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} is not a whole number of minor units")
    return value


def _currency(value: object, name: str) -> str:
    if not isinstance(value, str) or len(value) != 3 or not value.isalpha():
        raise ValueError(f"{name} is not an ISO 4217 code")
    return value.lower()


def _flag(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{name} is not true or false")
    return value


def _time(value: object, name: str) -> datetime:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _LAST_SECOND:
        raise ValueError(f"{name} is not whole seconds since the epoch")
    return datetime.fromtimestamp(value, UTC)


def _optional_text(value: object, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{name} is not text")
    return value[:_TEXT_MAX]


def _metadata(value: object) -> dict[str, str]:
    """The metadata Caseward attached, as the merchant kept it; values that are not
    text are not ours and are left out."""
    entries = _object(value, "metadata")
    return {str(k): v for k, v in entries.items() if isinstance(v, str)}
