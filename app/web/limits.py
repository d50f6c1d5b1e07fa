"""How much a request may carry: a body over its limit is refused with 413 before it is read.

A declared ``Content-Length`` over the limit is refused before any byte is read
(Werkzeug checks it when the stream opens, and :func:`refuse_declared_oversize` even
where no view reads the body). A body without one (chunked) is read through a stream
that refuses the first byte past the limit: Werkzeug's own stream would instead stop
quietly at the limit and hand the view a truncated body. The limit is the endpoint's,
known to the request class as soon as the URL has matched, so it holds whichever hook
(CSRF, rate limits) reads the body first.
"""

from __future__ import annotations

import io
from typing import IO

from flask import Flask, Request, request
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.utils import cached_property
from werkzeug.wsgi import get_input_stream

KIB = 1024
MIB = 1024 * KIB
# The staff API's largest body is a policy or a draft: a few KiB. A MiB is ample room.
APP_MAX_BYTES = 1 * MIB
# A Stripe event carries one object, whose lists are truncated to their first page and
# whose metadata is capped at 50 keys of 500 characters: far below this. Above it,
# the body is not an event Stripe sent.
WEBHOOK_MAX_BYTES = 256 * KIB
# The sign-in form holds a staff token and a CSRF token: a few hundred bytes.
SIGN_IN_MAX_BYTES = 8 * KIB

ENDPOINT_LIMITS: dict[str, int] = {
    "webhooks.stripe_webhook": WEBHOOK_MAX_BYTES,
    "operator.login": SIGN_IN_MAX_BYTES,
}


class LimitedRequest(Request):
    """A request whose body limit is its endpoint's, else the app's."""

    @property
    def max_content_length(self) -> int | None:
        if self._max_content_length is None and self.url_rule is not None:
            limit = ENDPOINT_LIMITS.get(self.url_rule.endpoint)
            if limit is not None:
                return limit
        return super().max_content_length

    @max_content_length.setter
    def max_content_length(self, value: int | None) -> None:
        self._max_content_length = value

    @cached_property
    def stream(self) -> IO[bytes]:
        limit = self.max_content_length
        if limit is None or self.content_length is not None:
            return get_input_stream(self.environ, max_content_length=limit)
        # One byte past the limit is read, to tell "exactly the limit" from "more".
        over = get_input_stream(self.environ, max_content_length=limit + 1)
        return io.BufferedReader(_RefusedPast(over, limit))


class _RefusedPast(io.RawIOBase):
    """A stream that raises 413 as soon as more than ``limit`` bytes have come through."""

    def __init__(self, stream: IO[bytes], limit: int) -> None:
        self._stream = stream
        self._limit = limit
        self._read = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
        data = self._stream.read(len(buffer))
        self._read += len(data)
        if self._read > self._limit:
            raise RequestEntityTooLarge()
        buffer[: len(data)] = data
        return len(data)


def init_app(app: Flask) -> None:
    if app.config.get("MAX_CONTENT_LENGTH") is None:  # Flask's default: no limit at all
        app.config["MAX_CONTENT_LENGTH"] = APP_MAX_BYTES
    app.request_class = LimitedRequest
    app.before_request(refuse_declared_oversize)


def refuse_declared_oversize() -> None:
    """Refuse a declared oversize body at once, even where the view never reads it."""
    limit = request.max_content_length
    if limit is not None and request.content_length is not None and request.content_length > limit:
        raise RequestEntityTooLarge()


def too_large_message() -> str:
    limit = request.max_content_length
    if limit is None:
        return "The request body is too large."
    size = f"{limit // MIB} MiB" if limit % MIB == 0 else f"{limit // KIB} KiB"
    return f"The request body may be at most {limit} bytes ({size}) here."
