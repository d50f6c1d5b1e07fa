"""The domain's exceptions. The web layer turns each into a JSON error with its status.

Every error names what went wrong in ``code`` (stable, for programs), ``message``
(a sentence for people) and, for bad input, ``field``. An error raised with a
:class:`~app.words.Sentence` keeps it as ``sentence``, so the web layer can say it in the
reader's language; ``message`` is always its English.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from app.words import Sentence


class CasewardError(Exception):
    status = 400
    code = "bad_request"
    # Headers the answer must carry besides the JSON body (a retry hint for the caller).
    default_headers: ClassVar[Mapping[str, str]] = {}

    def __init__(
        self, message: str | Sentence, *, field: str | None = None, code: str | None = None
    ):
        super().__init__(str(message))
        self.headers = dict(self.default_headers)
        self.message = str(message)
        self.sentence = message if isinstance(message, Sentence) else Sentence(self.message)
        self.field = field
        if code is not None:
            self.code = code


class InvalidInput(CasewardError):
    status = 400
    code = "invalid_input"


class Unauthenticated(CasewardError):
    status = 401
    code = "unauthenticated"


class SessionTokenRefused(Unauthenticated):
    """A Shopify session token failed verification. The header tells App Bridge to fetch
    a fresh token and send the request again, as Shopify requires of embedded apps."""

    code = "invalid_session_token"
    default_headers: ClassVar[Mapping[str, str]] = {"X-Shopify-Retry-Invalid-Session-Request": "1"}


class Forbidden(CasewardError):
    """The actor's role, limit or the shop's configuration does not allow this."""

    status = 403
    code = "forbidden"


class NotFound(CasewardError):
    status = 404
    code = "not_found"


class Conflict(CasewardError):
    """The request was about a state that no longer holds (stale digest, already decided)."""

    status = 409
    code = "conflict"


class ProviderUnavailable(CasewardError):
    """The provider did not answer; nothing was stored and the call may be repeated."""

    status = 502
    code = "provider_unavailable"


class TooManyRequests(CasewardError):
    """Asked too often; ``retry_after`` seconds until asking again can succeed."""

    status = 429
    code = "too_many_requests"

    def __init__(
        self, message: str | Sentence, *, retry_after: int, field: str | None = None
    ) -> None:
        super().__init__(message, field=field)
        self.headers["Retry-After"] = str(max(1, retry_after))
