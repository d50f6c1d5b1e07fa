"""What can go wrong talking to Shopify, one class per meaning.

The question every caller on the money path must answer is "did Shopify run it?", so
the classes are sorted by that answer, and each is also the matching error of the
provider contract (:mod:`integrations.provider`), so the executor can treat Shopify like
any other provider::

    ShopifyError (ProviderError)
    ├── ShopifyNotSent          nothing left this machine: connection refused, connect timeout
    ├── ShopifyThrottled        Shopify ran nothing: the cost bucket is empty (retry_after s)
    ├── ShopifyOutcomeUnknown   sent, no clear answer: timeout, dropped connection, 5xx,
    │                           an internal or idempotency error; only a look-up settles it
    ├── ShopifyRefused          Shopify answered 4xx and ran nothing (status)
    │   ├── ShopifyUnauthorized 401: token revoked or expired, or the app uninstalled
    │   └── ShopifyForbidden    403 or ACCESS_DENIED: the token lacks an access scope
    ├── ShopifyGraphQLError     the document was refused (syntax, validation, too costly)
    ├── ShopifyUserErrors       the mutation ran its checks and refused (``userErrors``)
    └── ShopifyTokenError       token exchange or refresh refused; carries the answer to send

No message ever contains an access token, a refresh token or a session token.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from integrations.provider import (
    NotSent,
    OutcomeUnknown,
    PermissionDenied,
    ProviderError,
    ProviderRejected,
    Throttled,
)


@dataclass(frozen=True)
class HttpAnswer:
    """An HTTP answer to hand back to the browser or to Shopify as it is."""

    status: int
    body: str
    headers: dict[str, str]


@dataclass(frozen=True)
class UserError:
    """One entry of a mutation's ``userErrors``: ``field`` is the input path, if any."""

    field: tuple[str, ...] | None
    message: str
    code: str | None = None


@dataclass(frozen=True)
class GraphQLErrorDetail:
    """One entry of a response's top-level ``errors``."""

    message: str
    code: str | None = None


class ShopifyError(ProviderError):
    """Base of every error raised by the Shopify client."""


class ShopifyNotSent(ShopifyError, NotSent):
    """The request never reached Shopify; the same request may go again at once."""


class ShopifyThrottled(ShopifyError, Throttled):
    """Shopify's cost bucket is empty; it ran nothing. Send again after ``retry_after`` s."""

    retry_after: float

    def __init__(self, message: str, *, retry_after: float, asked: bool = True) -> None:
        super().__init__(message, retry_after=retry_after, asked=asked)
        self.retry_after = retry_after


class ShopifyOutcomeUnknown(ShopifyError, OutcomeUnknown):
    """The request was sent and may have run. A query may simply be asked again; a
    mutation is settled only by looking for its effect."""


class ShopifyRefused(ShopifyError, ProviderRejected):
    """Shopify answered with a 4xx status and ran nothing."""

    status: int

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message, http_status=status)
        self.status = status


class ShopifyUnauthorized(ShopifyRefused):
    """401: the access token was revoked or expired, or the app was uninstalled."""


class ShopifyForbidden(ShopifyRefused, PermissionDenied):
    """The token lacks an access scope the request needs (403, or ``ACCESS_DENIED``)."""


class ShopifyGraphQLError(ShopifyError, ProviderRejected):
    """Shopify refused the document itself (syntax, validation, maximum cost exceeded)."""

    errors: tuple[GraphQLErrorDetail, ...]

    def __init__(self, errors: Sequence[GraphQLErrorDetail]) -> None:
        self.errors = tuple(errors)
        codes = [error.code for error in self.errors if error.code]
        super().__init__(
            "; ".join(error.message for error in self.errors) or "GraphQL error",
            code=codes[0] if codes else None,
        )


class ShopifyUserErrors(ShopifyError, ProviderRejected):
    """The mutation answered with ``userErrors``: it checked the input and did nothing."""

    mutation: str
    errors: tuple[UserError, ...]

    def __init__(self, mutation: str, errors: Sequence[UserError]) -> None:
        self.mutation = mutation
        self.errors = tuple(errors)
        codes = [error.code for error in self.errors if error.code]
        super().__init__(
            f"{mutation}: " + "; ".join(error.message for error in self.errors),
            code=codes[0] if codes else None,
        )


class ShopifyTokenError(ShopifyError):
    """Token exchange or refresh failed.

    ``code`` is ``shopifyapp``'s log code: ``invalid_subject_token`` (the session token
    was refused: answer with ``answer`` so App Bridge retries with a fresh one),
    ``invalid_grant`` or ``refresh_token_expired`` (the stored grant is gone: a new
    exchange from the next admin visit is needed), ``invalid_client`` (wrong credentials
    or the app was uninstalled), ``network_error``, ``rate_limit_exceeded``,
    ``server_error``, ``exchange_error``, ``refresh_error``, ``configuration_error``.
    """

    code: str
    answer: HttpAnswer

    def __init__(self, code: str, detail: str, answer: HttpAnswer) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.answer = answer
