"""Stripe's error envelope, as exceptions the resource code raises.

Every failure leaves the sandbox as ``{"error": {"type", "code", "message", "param",
"doc_url", ...}}`` with Stripe's HTTP status, because the SDK picks its exception class
from the status and ``type`` and the product branches on ``code``.

Two families matter for idempotency: :class:`ValidationError` is raised before an
endpoint starts executing (bad or unknown parameters), and Stripe does not save those
results under the idempotency key; everything else is a result of execution and is saved
and replayed.
"""

from __future__ import annotations

from typing import Any

JSON = dict[str, Any]

DOC_BASE = "https://stripe.com/docs/error-codes/"


class StripeApiError(Exception):
    """An error answer: HTTP status plus the body of Stripe's ``error`` object."""

    saved_for_idempotency = True

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        code: str | None = None,
        param: str | None = None,
        extra: JSON | None = None,
        should_retry: bool | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.code = code
        self.param = param
        self.extra = dict(extra or {})
        self.should_retry = should_retry

    def body(self) -> JSON:
        """The JSON document Stripe sends for this error."""
        error: JSON = {}
        if self.code is not None:
            error["code"] = self.code
            error["doc_url"] = DOC_BASE + self.code.replace("_", "-")
        error.update(self.extra)
        error["message"] = self.message
        if self.param is not None:
            error["param"] = self.param
        error["type"] = self.type
        return {"error": dict(sorted(error.items()))}


class ValidationError(StripeApiError):
    """A request rejected before the endpoint ran: never stored under an idempotency key."""

    saved_for_idempotency = False


def invalid(
    message: str, *, param: str | None = None, code: str | None = None, status: int = 400
) -> StripeApiError:
    """A 400 ``invalid_request_error`` found while executing (saved for idempotency)."""
    return StripeApiError(status, message, code=code, param=param)


def validation(
    message: str, *, param: str | None = None, code: str | None = None
) -> ValidationError:
    """A 400 for a malformed request (not saved for idempotency)."""
    return ValidationError(400, message, code=code, param=param)


def missing_param(name: str) -> ValidationError:
    """Stripe's answer when a required parameter is absent."""
    return validation(f"Missing required param: {name}.", param=name, code="parameter_missing")


def unknown_param(name: str) -> ValidationError:
    """Stripe's answer to a parameter the endpoint does not take."""
    return validation(f"Received unknown parameter: {name}", param=name, code="parameter_unknown")


def no_such(kind: str, object_id: str, *, param: str = "id", status: int = 404) -> StripeApiError:
    """``resource_missing``: 404 for an id in the path, 400 for an id in a parameter."""
    return StripeApiError(
        status, f"No such {kind}: '{object_id}'", code="resource_missing", param=param
    )


def api_error(
    message: str = "An unknown error occurred", *, should_retry: bool | None = None
) -> StripeApiError:
    """A 500 ``api_error`` (used by fault injection and unexpected failures).

    ``should_retry`` feeds ``Stripe-Should-Retry``: true only when nothing was executed."""
    return StripeApiError(500, message, type="api_error", should_retry=should_retry)


def rate_limited() -> StripeApiError:
    """Stripe's 429: too many requests for the account; nothing ran, so retrying is safe."""
    return StripeApiError(
        429,
        "Request rate limit exceeded. Learn more about rate limits here "
        "https://stripe.com/docs/rate-limits.",
        code="rate_limit",
        should_retry=True,
    )


def invalid_version(version: str) -> StripeApiError:
    """A ``Stripe-Version`` header that names no API version."""
    return StripeApiError(400, f"Invalid Stripe API version: {version}", should_retry=False)
