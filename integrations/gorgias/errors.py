"""What can go wrong talking to Gorgias' REST API, one class per meaning.

A caller posting a reply must know whether the customer may already have it, so the
classes are sorted by that answer::

    GorgiasError
    ├── GorgiasRefused      Gorgias answered 4xx (not 429) and created nothing: status and
    │                       Gorgias' own message (401 wrong credentials, 403 role, 404
    │                       ticket, 400 a field it would not take)
    └── GorgiasUnavailable  no usable answer, for one reason: rate_limited, timeout,
                            connection, server_error, bad_answer. ``maybe_posted`` says a
                            write may have landed unseen: post again with ``already_tried``
                            so the client looks for it first.

No message ever holds the API key or a message body.
"""

from __future__ import annotations

from typing import Literal

Reason = Literal["rate_limited", "timeout", "connection", "server_error", "bad_answer"]


class GorgiasError(Exception):
    """Base of every error the Gorgias client raises."""


class GorgiasRefused(GorgiasError):
    """Gorgias refused the request (4xx other than 429); sending it again changes nothing."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"Gorgias refused the request: HTTP {status}: {message}")
        self.status = status
        self.message = message


class GorgiasUnavailable(GorgiasError):
    """Gorgias gave no usable answer; the caller may try again later.

    ``retry_after_s`` is Gorgias' ``Retry-after`` when it was ``rate_limited``."""

    def __init__(
        self,
        reason: Reason,
        *,
        status: int | None = None,
        retry_after_s: float | None = None,
        maybe_posted: bool = False,
    ) -> None:
        details = f" (HTTP {status})" if status is not None else ""
        unsure = "; a message may have been posted" if maybe_posted else ""
        super().__init__(f"Gorgias is unavailable: {reason}{details}{unsure}")
        self.reason: Reason = reason
        self.status = status
        self.retry_after_s = retry_after_s
        self.maybe_posted = maybe_posted
