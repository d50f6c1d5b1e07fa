"""Every error leaves as JSON naming what went wrong, never as an HTML page.

The domain's errors know nothing of HTTP: :data:`STATUSES` gives each its status, and
every answer to one (here, the storefront's own handler, the record of a refusal) reads
it through :func:`status_of`.
"""

from __future__ import annotations

from flask import Flask, Response, jsonify, request
from redis.exceptions import RedisError
from werkzeug.exceptions import HTTPException

from app.db import request_session
from app.errors import (
    CasewardError,
    Conflict,
    Forbidden,
    InvalidInput,
    NotFound,
    ProviderUnavailable,
    TooManyRequests,
    Unauthenticated,
)
from app.web.admin_text import in_reader_words
from app.web.limits import too_large_message
from app.web.refusals import record_refusal
from app.words import said
from integrations.provider import CredentialsRefused, ProviderError, ProviderRejected, Throttled

# The status of each domain error, most specific class first: the first class the error
# is an instance of answers (a subclass not listed answers as its parent).
STATUSES: tuple[tuple[type[CasewardError], int], ...] = (
    (InvalidInput, 400),
    (Unauthenticated, 401),
    (Forbidden, 403),
    (NotFound, 404),
    (Conflict, 409),
    (TooManyRequests, 429),
    (ProviderUnavailable, 502),
    (CasewardError, 400),
)


def status_of(error: CasewardError) -> int:
    """The HTTP status the web answers ``error`` with (see :data:`STATUSES`)."""
    return next(status for kind, status in STATUSES if isinstance(error, kind))


def register_error_handlers(app: Flask) -> None:
    @app.errorhandler(CasewardError)
    def domain_error(error: CasewardError) -> tuple[Response, int]:
        # Nothing half-written: whatever the request changed before failing is dropped,
        # and only then is the refusal itself put on the record.
        request_session().rollback()
        status = status_of(error)
        record_refusal(error, status)
        body: dict[str, object] = {"code": error.code, "message": in_reader_words(error.sentence)}
        if error.field is not None:
            body["field"] = error.field
        response = jsonify({"error": body})
        response.headers.update(error.headers)
        return response, status

    @app.errorhandler(ProviderError)
    def provider_error(error: ProviderError) -> tuple[Response, int]:
        # A provider's answer stopped the request (a proposal's fresh facts, a look-up):
        # whatever the request changed is dropped, and the person can act on what it says.
        request_session().rollback()
        message = (
            # A shopper is told no provider's words (ids, the shop's key, its account).
            said("the shop could not reach its payment provider just now; try again soon")
            if request.blueprint == "proxy"
            else said(
                "the payment provider's answer stopped this request, and nothing was kept: "
                "%(error)s",
                error=str(error),
            )
        )
        body = {"error": {"code": _provider_code(error), "message": in_reader_words(message)}}
        response = jsonify(body)
        retry_after = error.retry_after if isinstance(error, Throttled) else None
        if retry_after is not None:
            response.headers["Retry-After"] = str(max(1, round(retry_after)))
        return response, 503 if isinstance(error, Throttled) else 502

    @app.errorhandler(RedisError)
    def redis_unreachable(error: RedisError) -> tuple[Response, int]:
        # Redis holds the rate limits and the queues. Unreachable before the request kept
        # anything, nothing half-written stays; after a webhook's commit, the provider's
        # redelivery queues its job. Either way the caller may try again shortly.
        request_session().rollback()
        message = said("Caseward cannot reach its queue just now; try again in a minute")
        response = jsonify(
            {"error": {"code": "queue_unavailable", "message": in_reader_words(message)}}
        )
        response.headers["Retry-After"] = "30"
        return response, 503

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> Response:
        code = error.code or 500
        message = too_large_message() if code == 413 else error.description
        body = {"error": {"code": _slug(error.name), "message": message}}
        response = jsonify(body)
        response.status_code = code
        # Keep what the error says besides its page: Allow on 405, Retry-After on 429.
        for name, value in error.get_headers():
            if name.lower() != "content-type":
                response.headers[name] = value
        return response


def _slug(name: str) -> str:
    return name.lower().replace(" ", "_").replace("'", "")


def _provider_code(error: ProviderError) -> str:
    if isinstance(error, Throttled):
        return "provider_throttled"
    if isinstance(error, CredentialsRefused):
        return "provider_credentials_refused"
    if isinstance(error, ProviderRejected):
        return "provider_refused"
    return "provider_unavailable"
