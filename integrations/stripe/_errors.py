"""Credentials and error translation for the Stripe adapter.

Two jobs live here because both are about what may leave the adapter: which keys
Caseward agrees to hold, and how an SDK exception becomes one of the protocol's errors
without ever carrying the API key in its text. The distinction that matters most is
between "Stripe answered and refused" (nothing happened, safe to tell a person) and
"we do not know" (a write may have happened, so only a lookup may settle it). Two
answers sit in between: "not now" (a 429, on a read or a write: Stripe ran nothing and
asks to be called later) and, for writes, "never sent" (the connection was refused, so
no byte of the request left); both mean nothing happened and the same request may go
again.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TypeVar

import stripe

from integrations.provider import (
    CredentialsRefused,
    IdempotencyConflict,
    NotSent,
    OutcomeUnknown,
    PermissionDenied,
    ProviderError,
    ProviderRejected,
    Throttled,
)

_log = logging.getLogger(__name__)

T = TypeVar("T")

# Stripe lets a concurrent request with the same key finish before it answers the
# second one; a short wait usually lets the first one land. Pauses before each retry.
IN_USE_RETRY_PAUSES = (0.2, 0.5)

REQUIRED_PERMISSIONS = (
    "Read: Charges, PaymentIntents, Customers, Subscriptions, Disputes; "
    "Write: Refunds, Customers (balance transactions), Coupons, Promotion codes, Subscriptions, "
    "Webhook endpoints"
)

_PERMISSION_NAME = re.compile(r"'(rak_[a-z_]+)'")


def mask_key(key: str) -> str:
    """The key as it may appear in text: its kind prefix and its last four characters."""
    match = re.match(r"[a-z]{2}_(?:live|test)_", key)
    prefix = match.group(0) if match else ""
    if len(key) < len(prefix) + 12:
        return prefix + "****"
    return f"{prefix}...{key[-4:]}"


def check_key(api_key: str, *, livemode: bool) -> None:
    """Refuse any key but a restricted key of the mode the shop runs in.

    A secret key can do everything on the account, including things Caseward must never
    do, so holding one is a liability even if our code behaves; a key of the other mode
    would silently move real money in a test setup, or none in a live one.
    """
    masked = mask_key(api_key)
    advice = (
        "Create a restricted key (rk_live_... or rk_test_...) in the Stripe dashboard "
        f"with these permissions: {REQUIRED_PERMISSIONS}."
    )
    if api_key.startswith("sk_"):
        raise CredentialsRefused(
            f"Caseward does not accept secret keys ({masked}): a secret key can do "
            f"anything on the account. {advice}",
            reason="secret_key",
            key=masked,
        )
    if api_key.startswith("rk_test_") and livemode:
        raise CredentialsRefused(
            f"The key {masked} is a test-mode key but the shop is in live mode. "
            "Use a live restricted key (rk_live_...).",
            reason="test_key_in_live_mode",
            key=masked,
        )
    if api_key.startswith("rk_live_") and not livemode:
        raise CredentialsRefused(
            f"The key {masked} is a live-mode key but the shop is in test mode. "
            "Use a test restricted key (rk_test_...).",
            reason="live_key_in_test_mode",
            key=masked,
        )
    if not api_key.startswith(("rk_live_", "rk_test_")):
        raise CredentialsRefused(
            f"{masked} is not a Stripe restricted key. {advice}",
            reason="not_restricted",
            key=masked,
        )


class Calls:
    """Runs SDK calls and turns every SDK exception into a protocol error.

    Reads and writes differ only in what a transport failure means: a failed read
    changed nothing (:class:`ProviderError`, try later), a failed write may have taken
    effect (:class:`OutcomeUnknown`, look it up before anything else) unless it provably
    did not (:class:`Throttled` for a 429, :class:`NotSent` for a refused connection).
    """

    def __init__(self, api_key: str, sleep: Callable[[float], None] = time.sleep) -> None:
        self._api_key = api_key
        self._masked = mask_key(api_key)
        self._sleep = sleep

    def read(self, what: str, call: Callable[[], T]) -> T:
        """A read; every failure becomes an error saying nothing was changed."""
        try:
            return call()
        except stripe.StripeError as error:
            raise self._translate(error, what, writing=False) from error

    def read_or_missing(self, what: str, call: Callable[[], T]) -> T | None:
        """A read of one object by id: ``None`` when Stripe says there is no such object."""
        try:
            return call()
        except stripe.InvalidRequestError as error:
            if error.http_status == 404 or _code(error) == "resource_missing":
                return None
            raise self._translate(error, what, writing=False) from error
        except stripe.StripeError as error:
            raise self._translate(error, what, writing=False) from error

    def write(
        self, what: str, idempotency_key: str, call: Callable[[stripe.RequestOptions], T]
    ) -> T:
        """One write under ``idempotency_key``; a 409 (key in use) is retried with the same key.

        The key is always ours: the SDK would otherwise invent one per call, and a key
        that does not survive a worker restart protects nothing.
        """
        options: stripe.RequestOptions = {"idempotency_key": idempotency_key}
        pauses = list(IN_USE_RETRY_PAUSES)
        while True:
            try:
                return call(options)
            except stripe.StripeError as error:
                if error.http_status == 409 and pauses:
                    self._sleep(pauses.pop(0))
                    continue
                raise self._translate(error, what, writing=True) from error

    def _translate(self, error: stripe.StripeError, what: str, *, writing: bool) -> ProviderError:
        """The protocol error for ``error``; the message names the call, never the key."""
        status = error.http_status
        code = _code(error)
        detail = self._scrub(error.user_message or type(error).__name__)
        if error.request_id:
            detail = f"{detail} (request {error.request_id})"
        if isinstance(error, stripe.IdempotencyError):
            return IdempotencyConflict(
                f"Stripe saw the idempotency key of the {what} with other parameters; the "
                f"first request may have taken effect, so a person must decide: {detail}"
            )
        unsent = _not_run(error, what, detail, writing=writing)
        if unsent is not None:
            return unsent
        refused_key = self._key_refused(error, what, detail)
        if refused_key is not None:
            return refused_key
        transient = (
            isinstance(error, stripe.APIConnectionError | stripe.RateLimitError)
            or status is None
            or not 400 <= status < 500
            or status == 409
        )
        if transient:
            if writing:
                _log.warning("Stripe %s: outcome unknown (%s, HTTP %s)", what, code, status)
                return OutcomeUnknown(
                    f"The {what} may or may not have happened at Stripe (HTTP {status}): {detail}"
                )
            return ProviderError(f"Stripe could not answer the {what} (HTTP {status}): {detail}")
        return ProviderRejected(
            f"Stripe refused the {what}: {detail}", code=code, http_status=status
        )

    def _key_refused(
        self, error: stripe.StripeError, what: str, detail: str
    ) -> CredentialsRefused | PermissionDenied | None:
        """Stripe checks the key, then its permissions, before anything else: a 401 or a
        403 is proof that the request did nothing there. ``None`` for anything else."""
        if isinstance(error, stripe.AuthenticationError) or error.http_status == 401:
            return CredentialsRefused(
                f"Stripe no longer accepts the key {self._masked} for the {what}: connect "
                f"Stripe again with a restricted key ({REQUIRED_PERMISSIONS}). {detail}",
                reason="unknown_key",
                key=self._masked,
            )
        if isinstance(error, stripe.PermissionError) or error.http_status == 403:
            permission = _PERMISSION_NAME.search(detail)
            missing = (
                f"the restricted key lacks the '{permission.group(1)}' permission"
                if permission
                else "the restricted key lacks a permission"
            )
            return PermissionDenied(
                f"Stripe refused the {what}: {missing}. Edit the key in the Stripe dashboard "
                f"({REQUIRED_PERMISSIONS}). {detail}",
                code=_code(error),
                http_status=error.http_status,
            )
        return None

    def _scrub(self, text: str) -> str:
        """``text`` with our key masked, in case Stripe ever echoes it whole."""
        return text.replace(self._api_key, self._masked)


def _not_run(
    error: stripe.StripeError, what: str, detail: str, *, writing: bool
) -> ProviderError | None:
    """:class:`Throttled` for a 429 (a read or a write: the caller waits and asks again)
    and, for a write, :class:`NotSent` for a refused connection; both are proof that
    Stripe did nothing. ``None`` for anything else."""
    if isinstance(error, stripe.RateLimitError) or error.http_status == 429:
        return Throttled(
            f"Stripe asked to slow down and did not run the {what} "
            f"(HTTP {error.http_status}): {detail}",
            retry_after=retry_after(error.headers),
        )
    if writing and isinstance(error, stripe.APIConnectionError) and _refused(error):
        return NotSent(f"The {what} was not sent: the connection to Stripe was refused. {detail}")
    return None


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Stripe's ``Retry-After`` in seconds (delta-seconds or an HTTP date), if it sent one."""
    value = next((v for k, v in (headers or {}).items() if k.lower() == "retry-after"), "").strip()
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - datetime.now(UTC)).total_seconds(), 0.0)


def _refused(error: stripe.APIConnectionError) -> bool:
    """Whether the connection was refused before the request went out.

    The SDK raises ``APIConnectionError`` from the HTTP library's exception, which wraps
    (requests -> urllib3's retry error -> its new-connection error) the socket's
    ``ConnectionRefusedError``. Only that error proves nothing was sent: a timeout or a
    reset may come after the request left, so those stay unknown."""
    return any(isinstance(link, ConnectionRefusedError) for link in _causes(error))


def _causes(error: BaseException) -> Iterator[BaseException]:
    """Every exception ``error`` was raised from, following ``__cause__``/``__context__``,
    urllib3's ``reason`` and exceptions carried as arguments (requests wraps that way)."""
    seen: set[int] = set()
    pending: list[BaseException] = [error]
    while pending:
        link = pending.pop()
        if id(link) in seen:
            continue
        seen.add(id(link))
        yield link
        linked = [link.__cause__, link.__context__, getattr(link, "reason", None), *link.args]
        pending.extend(item for item in linked if isinstance(item, BaseException))


def _code(error: stripe.StripeError) -> str | None:
    """Stripe's error code: the SDK only copies it onto some exception classes."""
    if error.code:
        return error.code
    body = error.error
    if body is not None and "code" in body and isinstance(body["code"], str):
        return body["code"]
    return None
