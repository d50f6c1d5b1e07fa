"""Posting to a Slack incoming webhook: one JSON message, signed, retried when it helps.

An incoming webhook is an address Slack gives a workspace
(``https://hooks.slack.com/services/T…/B…/…``): whoever holds it may post to its channel,
so it is kept as a secret. A post is ``{"text": ...}`` as JSON, with two headers of
Caseward's own so that a relay in front of the channel can tell Caseward's posts from
anyone else's:

* ``X-Caseward-Timestamp``: when it was signed, in whole seconds since the epoch;
* ``X-Caseward-Signature``: ``v1=`` and the hex HMAC-SHA256, under the shop's signing
  secret, of ``"{timestamp}.{body}"`` (the body's bytes as sent). A receiver recomputes
  it, compares in constant time and refuses a timestamp more than five minutes from its
  own clock (:func:`verify`).

Slack answers ``200 ok``. A 429 ran nothing: the post goes again after ``Retry-After``
(when Slack asks for no more than ``max_wait`` seconds). A 5xx, a timeout or a dropped
connection goes again after a short doubling pause: a post Slack did take may then show
twice, which is the lesser harm when the message tells an owner that sending stopped.
After ``attempts`` posts, :class:`SlackUnavailable`. Any other answer (400
``invalid_payload``, 403, 404 ``no_service``, 410 ``channel_is_archived``) is
:class:`SlackRefused`: posting again will not help until the address is fixed.

``api_base`` sends the posts to the sandbox instead, keeping the path. Neither the
address nor the secret reaches a log line or an exception's text.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

log = logging.getLogger(__name__)

SIGNATURE_HEADER = "X-Caseward-Signature"
TIMESTAMP_HEADER = "X-Caseward-Timestamp"
SECRET_PREFIX = "cwss_"  # noqa: S105  (a prefix, not a secret)
# Where Slack serves incoming webhooks (its commercial and its government cloud).
WEBHOOK_HOSTS = ("hooks.slack.com", "hooks.slack-gov.com")
# How far a receiver lets a signature's time be from its own clock.
TOLERANCE_SECONDS = 300


class SlackError(Exception):
    """A post Slack did not take."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class SlackRefused(SlackError):
    """Slack refused the post for a reason posting again does not change (an address it
    does not know, a channel archived, a body it cannot read)."""


class SlackUnavailable(SlackError):
    """Slack did not take the post after every attempt (429s, 5xx, no answer)."""


def new_secret() -> str:
    """A fresh signing secret: ``cwss_`` and 32 random bytes, URL-safe base64."""
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """``v1=`` and the hex HMAC-SHA256 of ``"{timestamp}.{body}"`` under ``secret``."""
    signed = f"{timestamp}.".encode() + body
    return "v1=" + hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


def verify(secret: str, headers: Mapping[str, str], body: bytes, *, now: float) -> bool:
    """Whether a post's headers sign ``body`` with ``secret``, at a time within
    :data:`TOLERANCE_SECONDS` of ``now`` (a receiver's check)."""
    lowered = {name.lower(): value for name, value in headers.items()}
    stamp = lowered.get(TIMESTAMP_HEADER.lower(), "")
    given = lowered.get(SIGNATURE_HEADER.lower(), "")
    if not stamp.isdigit() or abs(now - int(stamp)) > TOLERANCE_SECONDS:
        return False
    return hmac.compare_digest(given, signature(secret, int(stamp), body))


def is_webhook_url(url: str) -> bool:
    """Whether ``url`` is a Slack incoming webhook's address: https, Slack's webhook host,
    a ``/services/`` path, and nothing else (no credentials, port, query or fragment)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return False
    return (
        parts.scheme == "https"
        and (parts.hostname or "") in WEBHOOK_HOSTS
        and parts.netloc == parts.hostname
        and port is None
        and parts.path.startswith("/services/")
        and len(parts.path) > len("/services/")
        and not parts.query
        and not parts.fragment
        and not any(character.isspace() for character in url)
    )


def url_hint(url: str) -> str:
    """What a page may show of a webhook's address: its host and its last four characters."""
    parts = urlsplit(url)
    return f"{parts.hostname}/…{parts.path[-4:]}"


@dataclass(frozen=True)
class SlackWebhook:
    """Posts to incoming webhooks; all waiting goes through ``sleep`` and ``clock``."""

    api_base: str = ""
    timeout_seconds: float = 10.0
    attempts: int = 3
    # The longest Retry-After honoured within one delivery; longer, the caller tries later.
    max_wait_seconds: float = 30.0
    first_pause_seconds: float = 0.5
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.time
    transport: httpx.BaseTransport | None = None

    def post(self, url: str, text: str, *, secret: str) -> None:
        """Post ``text`` to the webhook at ``url``, signed with ``secret``."""
        body = json.dumps({"text": text}, ensure_ascii=False).encode("utf-8")
        with httpx.Client(timeout=self.timeout_seconds, transport=self.transport) as client:
            pause = self.first_pause_seconds
            for attempt in range(1, self.attempts + 1):
                timestamp = int(self.clock())
                headers = {
                    "Content-Type": "application/json",
                    TIMESTAMP_HEADER: str(timestamp),
                    SIGNATURE_HEADER: signature(secret, timestamp, body),
                }
                failure: SlackError
                try:
                    response = client.post(self._target(url), content=body, headers=headers)
                except httpx.TransportError as exc:
                    failure = SlackUnavailable(f"no answer from Slack ({type(exc).__name__})")
                    wait = pause
                else:
                    if response.is_success:
                        return
                    failure, wait = self._failure(response, pause)
                if attempt == self.attempts:
                    raise failure
                log.info("Slack post %s failed (%s); again in %.1fs", attempt, failure, wait)
                self.sleep(wait)
                pause *= 2

    def _failure(self, response: httpx.Response, pause: float) -> tuple[SlackError, float]:
        """What an unsuccessful answer means, and how long to wait before posting again;
        raises at once when posting again cannot help."""
        status = response.status_code
        said = response.text[:80].strip()
        if status == 429:
            wait = _retry_after(response.headers.get("Retry-After"), pause)
            failure = SlackUnavailable(f"Slack answered 429 ({said})", status=status)
            if wait > self.max_wait_seconds:
                raise failure
            return failure, wait
        if status >= 500:
            return SlackUnavailable(f"Slack answered {status} ({said})", status=status), pause
        raise SlackRefused(f"Slack refused the post: {status} ({said})", status=status)

    def _target(self, url: str) -> str:
        if not self.api_base:
            return url
        parts = urlsplit(url)
        return self.api_base.rstrip("/") + parts.path


def _retry_after(header: str | None, otherwise: float) -> float:
    """Seconds Slack asked to wait (a whole number), else ``otherwise``."""
    try:
        return max(float(header), 0.0) if header is not None else otherwise
    except ValueError:
        return otherwise
