"""Slack, as Caseward tells a shop's team: one incoming webhook per shop, posted to signed.

:mod:`.webhook` posts (and signs, and retries); :mod:`.sandbox` is a local Slack that
takes incoming-webhook posts, for the demo and the tests.
"""

from .webhook import (
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    SlackError,
    SlackRefused,
    SlackUnavailable,
    SlackWebhook,
    is_webhook_url,
    new_secret,
    signature,
    url_hint,
    verify,
)

__all__ = [
    "SIGNATURE_HEADER",
    "TIMESTAMP_HEADER",
    "SlackError",
    "SlackRefused",
    "SlackUnavailable",
    "SlackWebhook",
    "is_webhook_url",
    "new_secret",
    "signature",
    "url_hint",
    "verify",
]
