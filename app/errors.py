"""The domain's exceptions: one class per meaning, none of them knowing HTTP.

The hierarchy, and the status the web layer (:mod:`app.web.errors`) answers each with::

    CasewardError                 cannot be done as asked                     400
    ├── InvalidInput              bad input; ``field`` names it               400
    ├── Unauthenticated           no credential, or one not accepted          401
    │   ├── SessionTokenRefused   a Shopify session token that failed         401
    │   └── TokenRefused          a staff token unknown, expired, revoked     401
    │                             (:mod:`app.staff.tokens`)
    ├── Forbidden                 the role, a limit or the shop says no       403
    ├── NotFound                  nothing of that id in this shop             404
    ├── Conflict                  a state that no longer holds                409
    ├── TooManyRequests           asked too often; ``Retry-After`` says when  429
    │   └── AgentRateLimited      an agent credential's calls, too many       429
    │                             (:mod:`app.agents.call_limit`)
    └── ProviderUnavailable       the provider did not answer                 502

Every error names what went wrong in ``code`` (stable, for programs), ``message``
(a sentence for people) and, for bad input, ``field``; ``headers`` are what the answer
must carry besides its body (a retry hint). An error raised with a
:class:`~app.words.Sentence` keeps it as ``sentence``, so the web layer can say it in the
reader's language; ``message`` is always its English.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from app.words import Sentence


class CasewardError(Exception):
    """What was asked cannot be done as asked; a subclass says why, when one fits."""

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
    """The input is not what the request takes; ``field`` names the part that is wrong."""

    code = "invalid_input"


class Unauthenticated(CasewardError):
    """No credential came with the request, or the one that came is not accepted."""

    code = "unauthenticated"


class SessionTokenRefused(Unauthenticated):
    """A Shopify session token failed verification. The header tells App Bridge to fetch
    a fresh token and send the request again, as Shopify requires of embedded apps."""

    code = "invalid_session_token"
    default_headers: ClassVar[Mapping[str, str]] = {"X-Shopify-Retry-Invalid-Session-Request": "1"}


class Forbidden(CasewardError):
    """The actor's role, limit or the shop's configuration does not allow this."""

    code = "forbidden"


class NotFound(CasewardError):
    """Nothing of that id exists, or none that the actor's shop may see."""

    code = "not_found"


class Conflict(CasewardError):
    """The request was about a state that no longer holds (stale digest, already decided)."""

    code = "conflict"


class ProviderUnavailable(CasewardError):
    """The provider did not answer; nothing was stored and the call may be repeated."""

    code = "provider_unavailable"


class TooManyRequests(CasewardError):
    """Asked too often; ``retry_after`` seconds until asking again can succeed."""

    code = "too_many_requests"

    def __init__(
        self, message: str | Sentence, *, retry_after: int, field: str | None = None
    ) -> None:
        super().__init__(message, field=field)
        self.headers["Retry-After"] = str(max(1, retry_after))
